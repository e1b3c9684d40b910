// Loads a plugin directory into the installed openclaw package with OpenClaw's own plugin
// loader, then fires before_tool_call events through OpenClaw's global hook runner, exactly as
// the agent loop does before it runs a tool. Reads {openclaw, plugin, config, calls} as JSON on
// stdin and prints [{result, ms}] as JSON: the hook runner's merged result for each call.
import { readFileSync } from "node:fs";
import { pathToFileURL } from "node:url";

const spec = JSON.parse(readFileSync(0, "utf8"));
const dist = (path) => pathToFileURL(`${spec.openclaw}/dist/${path}`).href;
const { loadOpenClawPlugins } = await import(dist("plugins/loader.js"));
const { getGlobalHookRunner } = await import(dist("plugins/hook-runner-global.js"));

const registry = loadOpenClawPlugins({
  config: {
    plugins: {
      allow: ["policyctl"],
      load: { paths: [spec.plugin] },
      entries: { policyctl: { enabled: true, config: spec.config } },
    },
  },
  workspaceDir: process.cwd(),
});
const record = registry.plugins.find((plugin) => plugin.id === "policyctl");
if (!record || record.status !== "loaded") {
  console.error(JSON.stringify({ plugin: record ?? null, diagnostics: registry.diagnostics }));
  process.exit(3);
}
const runner = getGlobalHookRunner();
if (!runner || !runner.hasHooks("before_tool_call")) {
  console.error("the hook runner holds no before_tool_call hook");
  process.exit(4);
}
const out = [];
for (const call of spec.calls) {
  const started = Date.now();
  const result = await runner.runBeforeToolCall(call.event, { toolName: call.event.toolName, ...call.ctx });
  out.push({ result: JSON.parse(JSON.stringify(result ?? null)), ms: Date.now() - started });
}
process.stdout.write(JSON.stringify(out));
