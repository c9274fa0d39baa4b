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
  const sdkGoMod = () => fromTarball('pulsar/go.mod');
  const requireBlocks = (text: string) => text.match(/^require \([\s\S]*?^\)/gm) ?? [];

  it("takes the go line and every require block of the SDK's pulsar/go.mod", () => {
    const sdk = sdkGoMod();
    expect(goMod).toContain(/^go .*$/m.exec(sdk)![0]);
    expect(requireBlocks(sdk).length).toBeGreaterThan(0);
    expect(requireBlocks(goMod)).toEqual(requireBlocks(sdk));
  });

  it('requires the pulsar module and replaces both SDK modules by the unpacked tree', () => {
    expect(goMod).toMatch(/^require github\.com\/babelqueue\/babelqueue-go\/pulsar v1\.0\.0$/m);
    expect(goMod).toMatch(/^replace github\.com\/babelqueue\/babelqueue-go => \.\/vendored-sdk$/m);
    expect(goMod).toMatch(/^replace github\.com\/babelqueue\/babelqueue-go\/pulsar => \.\/vendored-sdk\/pulsar$/m);
  });

  it("has the SDK's pulsar/go.sum", () => {
    expect(fs.readFileSync(path.join(peerDir, 'go.sum'), 'utf8')).toBe(fromTarball('pulsar/go.sum'));
  });
});
