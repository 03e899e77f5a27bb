// `bpfsbx init` then `bpfsbx uninstall` on a folder that already has
// Claude Code and Codex configuration leaves it byte-for-byte as it was.
import fs from 'node:fs';
import path from 'node:path';
import { bpfsbx, tmpdir, run, snapshot, diffSnapshots, assert } from './lib.mjs';

export const tests = {
  async 'init-uninstall: existing settings.json and .mcp.json come back identical'() {
    const dir = path.join(tmpdir('init'), 'proj');
    fs.mkdirSync(path.join(dir, '.claude'), { recursive: true });
    fs.mkdirSync(path.join(dir, '.codex'), { recursive: true });
    // formatting and key order that a JSON library would not reproduce
    fs.writeFileSync(path.join(dir, '.claude', 'settings.json'),
      '{\n\t"model" : "sonnet",\n\t"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "./mine.sh"}]}]},\n\t"permissions": {"deny": ["Read(./.env)"]}\n}');
    fs.chmodSync(path.join(dir, '.claude', 'settings.json'), 0o600);
    fs.writeFileSync(path.join(dir, '.mcp.json'), '{"mcpServers":{"github":{"command":"npx","args":["-y","gh-mcp"],"env":{"T":"x"}}}}');
    fs.writeFileSync(path.join(dir, '.codex', 'config.toml'), '# mine\nmodel = "o3"\n[mcp_servers.docs]\ncommand = "docs-mcp"');
    fs.writeFileSync(path.join(dir, 'README.md'), '# project\n');
    const before = snapshot(dir);

    let r = await run(bpfsbx, ['init', dir, '--claude', '--mcp', '--codex', '--cursor']);
    assert(r.code === 0, `init: ${r.code} ${r.err}`);
    const settings = JSON.parse(fs.readFileSync(path.join(dir, '.claude', 'settings.json'), 'utf8'));
    const cmds = JSON.stringify(settings.hooks);
    assert(cmds.includes('./mine.sh') && cmds.includes(' hook pre-tool-use'), `hooks: ${cmds}`);
    const mcp = JSON.parse(fs.readFileSync(path.join(dir, '.mcp.json'), 'utf8'));
    // committed files name no path of this machine: the server finds the project
    assert(mcp.mcpServers.github && JSON.stringify(mcp.mcpServers.bpfsbx?.args) === '["mcp"]' &&
           !JSON.stringify(mcp).includes(dir), JSON.stringify(mcp));
    const mid = snapshot(dir);
    r = await run(bpfsbx, ['init', dir, '--claude', '--mcp', '--codex', '--cursor']);
    assert(r.code === 0 && r.out.includes('nothing changed'), `second init: ${r.out} ${r.err}`);
    const d2 = diffSnapshots(mid, snapshot(dir));
    assert(d2.length === 0, `second init changed: ${d2.join(', ')}`);

    r = await run(bpfsbx, ['uninstall', dir]);
    assert(r.code === 0, `uninstall: ${r.code} ${r.err}`);
    const d = diffSnapshots(before, snapshot(dir));
    assert(d.length === 0, `not identical after uninstall: ${d.join(', ')}`);

    r = await run(bpfsbx, ['uninstall', dir]);
    assert(r.code === 1 && r.err.includes('was not set up'), `second uninstall: ${r.code} ${r.err}`);
  },
};
