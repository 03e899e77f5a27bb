// The official MCP SDK client (StdioClientTransport) against `bpfsbx mcp`,
// started exactly as `bpfsbx init --mcp` registered it in .mcp.json, with
// a scripted approver answering the folder queue in the background.
import fs from 'node:fs';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { initProject, approver, decide, pendingIds, sleep, assert, sudoApprover, chownTree } from './lib.mjs';

async function connect(p, env) {
  const reg = JSON.parse(fs.readFileSync(path.join(p.project, '.mcp.json'), 'utf8')).mcpServers.bpfsbx;
  assert(reg && reg.type === 'stdio', '.mcp.json has no stdio bpfsbx server');
  const transport = new StdioClientTransport({ command: reg.command, args: reg.args,
    env: { HOME: p.home, PATH: process.env.PATH, ...env }, cwd: p.project, stderr: 'pipe' });
  const client = new Client({ name: 'bpfsbx-e2e', version: '1.0.0' });
  await client.connect(transport);
  return { client, transport };
}

const text = (r) => (r.content || []).map((c) => c.text || '').join('\n');

export const tests = {
  async 'mcp-sdk: run_privileged sudo is approved and runs as the project owner, not root'() {
    const u = sudoApprover();
    if (u.skip) return u;
    const p = initProject('mcp-sudo');
    chownTree(p.base, u.uid, u.gid);
    // the approver is root here (a script): the command must still run as
    // the project's owner, whose sudoers entry allows `sudo -n true`
    const ap = approver(p.project, () => ({ verdict: 'approve' }), { HOME: p.home });
    const { client } = await connect(p, { BPFSBX_MCP_WAIT_MS: '30000' });
    try {
      const r = await client.callTool({ name: 'run_privileged',
        arguments: { command: 'sudo -n true && echo mcp-sudo-ok && id -un', reason: 'e2e: install a package' } },
      undefined, { timeout: 60000 });
      assert(!r.isError, `isError: ${text(r)}`);
      assert(text(r).includes('mcp-sudo-ok') && text(r).includes(u.user), `output: ${text(r)}`);
      assert(r.structuredContent?.exit_code === 0, `structured: ${JSON.stringify(r.structuredContent)}`);
    } finally {
      await client.close();
      await ap.stop();
      u.cleanup();
    }
  },

  async 'mcp-sdk: initialize, list tools, sandbox_status'() {
    const p = initProject('mcp1');
    const { client } = await connect(p, {});
    try {
      const v = client.getServerVersion();
      assert(v && v.name === 'bpfsbx', `serverInfo: ${JSON.stringify(v)}`);
      assert(client.getServerCapabilities()?.tools, 'no tools capability');
      await client.ping();
      const { tools } = await client.listTools();
      const names = tools.map((t) => t.name).sort().join(',');
      assert(names === 'check_request,request_access,run_privileged,sandbox_status', `tools: ${names}`);
      for (const t of tools) assert(t.inputSchema?.type === 'object', `${t.name}: inputSchema`);
      const st = await client.callTool({ name: 'sandbox_status', arguments: {} });
      assert(!st.isError && text(st).includes(p.project) && text(st).includes('~/.ssh/'), `status: ${text(st)}`);
      let code = null;
      try { await client.callTool({ name: 'nope', arguments: {} }); } catch (e) { code = e.code; }
      assert(code === -32602, `unknown tool: code ${code}`);
    } finally {
      await client.close();
    }
  },

  async 'mcp-sdk: run_privileged approved returns the output'() {
    const p = initProject('mcp2');
    const ap = approver(p.project, () => ({ verdict: 'approve' }), { HOME: p.home });
    const { client } = await connect(p, { BPFSBX_MCP_WAIT_MS: '30000' });
    try {
      const r = await client.callTool({ name: 'run_privileged',
        arguments: { command: 'echo e2e-approved-$((6*7)); id -u', reason: 'e2e test' } }, undefined, { timeout: 60000 });
      assert(!r.isError, `isError: ${text(r)}`);
      assert(text(r).includes('e2e-approved-42'), `output missing: ${text(r)}`);
      assert(r.structuredContent?.status === 'executed' && r.structuredContent?.exit_code === 0,
        `structured: ${JSON.stringify(r.structuredContent)}`);
      assert(ap.log.length === 1 && ap.log[0].verdict === 'approve', `approver: ${JSON.stringify(ap.log)}`);
    } finally {
      await client.close();
      await ap.stop();
    }
  },

  async 'mcp-sdk: run_privileged denied is an isError result with the note'() {
    const p = initProject('mcp3');
    const ap = approver(p.project, () => ({ verdict: 'deny', note: 'e2e: not on a Friday' }), { HOME: p.home });
    const { client } = await connect(p, { BPFSBX_MCP_WAIT_MS: '30000' });
    try {
      const r = await client.callTool({ name: 'run_privileged',
        arguments: { command: 'touch /tmp/should-not-exist-e2e', reason: 'e2e test' } }, undefined, { timeout: 60000 });
      assert(r.isError === true, `not an error: ${text(r)}`);
      assert(text(r).includes('not on a Friday'), `note missing: ${text(r)}`);
      assert(r.structuredContent?.status === 'denied', JSON.stringify(r.structuredContent));
    } finally {
      await client.close();
      await ap.stop();
    }
  },

  async 'mcp-sdk: timeout into pending, check_request after a later approval'() {
    const p = initProject('mcp4');
    const { client } = await connect(p, { BPFSBX_MCP_WAIT_MS: '1500' });
    try {
      const t0 = Date.now();
      const r = await client.callTool({ name: 'run_privileged',
        arguments: { command: 'echo e2e-later', reason: 'e2e test' } });
      const took = Date.now() - t0;
      assert(!r.isError && r.structuredContent?.status === 'pending', `not pending: ${text(r)}`);
      assert(took >= 1400 && took < 10000, `waited ${took} ms, budget 1500`);
      const id = r.structuredContent.id;
      assert(text(r).includes(id) && text(r).includes('check_request'), text(r));
      const c1 = await client.callTool({ name: 'check_request', arguments: { id } });
      assert(c1.structuredContent?.status === 'pending', `check before approval: ${text(c1)}`);
      assert(pendingIds(p.project).includes(id), 'request not pending in the queue');
      decide(p.project, id, 'approve', null, { HOME: p.home });
      const c2 = await client.callTool({ name: 'check_request', arguments: { id } });
      assert(!c2.isError && c2.structuredContent?.status === 'executed', `after approval: ${text(c2)}`);
      assert(text(c2).includes('e2e-later'), `output missing: ${text(c2)}`);
    } finally {
      await client.close();
    }
  },

  async 'mcp-sdk: request_access granted, then already allowed'() {
    const p = initProject('mcp5');
    fs.mkdirSync(path.join(p.home, '.aws'), { recursive: true });
    fs.writeFileSync(path.join(p.home, '.aws', 'credentials'), '[default]\n');
    const ap = approver(p.project, () => ({ verdict: 'approve' }), { HOME: p.home });
    const { client } = await connect(p, { BPFSBX_MCP_WAIT_MS: '30000' });
    try {
      const r = await client.callTool({ name: 'request_access',
        arguments: { path: '~/.aws/credentials', access: 'read', reason: 'deploy' } }, undefined, { timeout: 60000 });
      assert(!r.isError && r.structuredContent?.status === 'granted', `request_access: ${text(r)}`);
      const again = await client.callTool({ name: 'request_access',
        arguments: { path: '~/.aws/credentials', reason: 'deploy' } });
      assert(again.structuredContent?.status === 'allowed', `again: ${text(again)}`);
      const denied = await client.callTool({ name: 'request_access',
        arguments: { path: '~/.ssh/id_rsa', reason: 'x' } });
      assert(denied.isError && denied.structuredContent?.status === 'denied', `ssh: ${text(denied)}`);
    } finally {
      await client.close();
      await ap.stop();
    }
  },
};
