// The option tables of the docs are rendered from the option tables in lib/ (their JSDoc and @defaultValue), so a
// new option shows up in the docs by `npm run readme`, and a table edited by hand fails here.
import fs from 'node:fs';
import path from 'node:path';
import { OPTION_PAGES, renderOptionTables, renderTable } from '../../scripts/lib/option-tables.mjs';
import { root } from '../../scripts/lib/readme-snippets.mjs';
import { consumerOptions } from '../../lib/nest/options/consumer-options.js';
import { handlerOptionTable } from '../../lib/nest/options/handler-options.js';
import { moduleOptionTable } from '../../lib/nest/module/module-options.js';

describe('the option tables of the docs', () => {
  it.each(OPTION_PAGES)('%s is up to date (npm run readme renders it)', async (page) => {
    expect(fs.readFileSync(path.join(root, page), 'utf8')).toBe(await renderOptionTables(page));
  });

  it('lists every option of the module, its consumer and @BabelHandler, each with its documentation', () => {
    const module = renderTable('module');
    for (const key of Object.keys(moduleOptionTable).filter((key) => key !== 'consumer'))
      expect(module).toMatch(new RegExp(`^\\| \`${key}\` \\| .+ \\| .{10,} \\|$`, 'm'));
    for (const key of Object.keys(consumerOptions))
      expect(module).toMatch(new RegExp(`^\\| \`consumer\\.${key}\` \\| .+ \\| .{10,} \\|$`, 'm'));
    const handler = renderTable('handler');
    for (const key of Object.keys(handlerOptionTable))
      expect(handler).toMatch(new RegExp(`^\\| \`${key}\` \\| .+ \\| .{10,} \\|$`, 'm'));
  });
});
