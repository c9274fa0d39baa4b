// The Go interop peer's setup without building it: a missing or broken vendored SDK fails at the
// "unpack" step (as the interop suite reports it), and the checked-in go.mod/go.sum follow the recipe
// of ../shared/vendor/README.md for the vendored release.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { setupPeer } from '../../interop/support/peers.js';

const repoRoot = fileURLToPath(new URL('../../../', import.meta.url));
const peerDir = path.join(repoRoot, 'test', 'interop', 'peers', 'go');
const vendorDir = process.env.BQ_VENDOR_DIR || path.join(repoRoot, '..', 'shared', 'vendor');
const tarball = path.join(vendorDir, 'babelqueue-go-1.8.0.tar.gz');

describe('Go interop peer setup', () => {
  let scratch: string;
  // The setup script runs in a child process; Jest's process.env is not the one a child inherits.
  const env = () => ({
    ...process.env,
    BQ_VENDOR_DIR: path.join(scratch, 'vendor'),
    BABELQUEUE_PULSAR_CACHE: path.join(scratch, 'cache'),
  });

  beforeEach(() => {
    scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'bq-go-setup-'));
    fs.mkdirSync(path.join(scratch, 'vendor'));
  });
  afterEach(() => fs.rmSync(scratch, { recursive: true, force: true }));

  it('fails at the unpack step when the vendor folder has no SDK tarball', () => {
    const setup = setupPeer('go', env());
    expect(setup).toMatchObject({ ok: false, code: 'VENDOR_MISSING', step: 'unpack' });
    expect(!setup.ok && setup.reason).toContain(`step "unpack" failed`);
    expect(!setup.ok && setup.reason).toContain(path.join(scratch, 'vendor', 'babelqueue-go-1.8.0.tar.gz'));
    expect(!setup.ok && setup.reason).toContain('BQ_VENDOR_DIR');
  });

  it('fails at the unpack step when the tarball is not one, and leaves nothing half-unpacked', () => {
    fs.writeFileSync(path.join(scratch, 'vendor', 'babelqueue-go-1.8.0.tar.gz'), 'not a tarball');
    const setup = setupPeer('go', env());
    expect(setup).toMatchObject({ ok: false, code: 'UNPACK_FAILED', step: 'unpack' });
    expect(!setup.ok && setup.reason).toContain('tar -xzf');
    const unpacked = path.join(scratch, 'cache', 'interop', 'vendor');
    expect(fs.existsSync(unpacked) ? fs.readdirSync(unpacked) : []).toEqual([]);
  });
});

describe('the Go peer module follows the vendor recipe', () => {
  const fromTarball = (file: string): string => {
    const result = spawnSync('tar', ['-xzOf', tarball, `babelqueue-go-1.8.0/${file}`], { encoding: 'utf8' });
    if (result.status !== 0) throw new Error(`cannot read ${file} from ${tarball}: ${result.stderr}`);
    return result.stdout;
  };
  const goMod = fs.readFileSync(path.join(peerDir, 'go.mod'), 'utf8');
  const requireBlocks = (text: string) => text.match(/^require \([\s\S]*?^\)/gm) ?? [];
  /** module → version of every require line (blocks and single lines). */
  const requirements = (text: string): Map<string, string> => {
    const lines = [
      ...requireBlocks(text).flatMap((block) => block.split('\n').slice(1, -1)),
      ...(text.match(/^require [^(].*$/gm) ?? []).map((line) => line.slice('require '.length)),
    ];
    return new Map(
      lines.map((line) => line.trim().split(/\s+/)).map(([module, version]) => [module!, version!] as const),
    );
  };
  const CORE = 'github.com/babelqueue/babelqueue-go';

  it("takes the go line of the SDK's pulsar/go.mod", () => {
    expect(goMod).toContain(/^go .*$/m.exec(fromTarball('pulsar/go.mod'))![0]);
  });

  it("requires what the SDK's pulsar and otel modules require, at their versions (pulsar's where both pin one)", () => {
    const peer = requirements(goMod);
    // The core is replaced by the unpacked tree, so its version is only what the otel module names.
    const expected = new Map([
      ...requirements(fromTarball('otel/go.mod')),
      ...requirements(fromTarball('pulsar/go.mod')),
    ]);
    expected.delete(CORE);
    expect(expected.size).toBeGreaterThan(40);
    for (const [module, version] of expected) expect([module, peer.get(module)]).toEqual([module, version]);
  });

  it('requires the pulsar and otel modules and replaces the three SDK modules by the unpacked tree', () => {
    expect(goMod).toMatch(/^require github\.com\/babelqueue\/babelqueue-go\/pulsar v1\.0\.0$/m);
    expect(requirements(goMod).get(`${CORE}/otel`)).toBe('v1.0.0');
    expect(goMod).toMatch(/^replace github\.com\/babelqueue\/babelqueue-go => \.\/vendored-sdk$/m);
    expect(goMod).toMatch(/^replace github\.com\/babelqueue\/babelqueue-go\/pulsar => \.\/vendored-sdk\/pulsar$/m);
    expect(goMod).toMatch(/^replace github\.com\/babelqueue\/babelqueue-go\/otel => \.\/vendored-sdk\/otel$/m);
  });

  it("has the hashes of the SDK's pulsar/go.sum and otel/go.sum, bar two versions the build's graph supersedes", () => {
    const goSum = new Set(fs.readFileSync(path.join(peerDir, 'go.sum'), 'utf8').split('\n'));
    // go mod tidy drops these: pulsar-client-go needs x/sys v0.19.0, the OpenTelemetry SDK go-cmp v0.6.0.
    const superseded = ['github.com/google/go-cmp v0.5.9', 'golang.org/x/sys v0.17.0'];
    const sdk = `${fromTarball('pulsar/go.sum')}${fromTarball('otel/go.sum')}`
      .split('\n')
      .filter(
        (line) =>
          line !== '' &&
          !superseded.some((version) => line.startsWith(`${version} `) || line.startsWith(`${version}/`)),
      );
    expect(sdk.filter((line) => !goSum.has(line))).toEqual([]);
  });
});
