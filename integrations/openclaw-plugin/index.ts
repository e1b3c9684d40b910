// policyctl's OpenClaw plugin: before every tool call, ask a policyctl decision server
// (`policyctl serve`, POST /v1/decide) and turn its verdict into OpenClaw's hook result.
// allow -> no decision (the call proceeds), deny -> block with the server's refusal text,
// ask -> requireApproval. Anything else (no server, a timeout, a non-2xx answer, an answer
// that is not a decision, a broken configuration) blocks the call: the plugin fails closed.

import { readFileSync } from "node:fs";
import { homedir } from "node:os";
import type { OpenClawPluginApi, OpenClawPluginDefinition } from "openclaw/plugin-sdk/plugin-entry";

const DEFAULT_TIMEOUT_MS = 2000;
// OpenClaw's own budget for a before_tool_call handler is 15 s; stay below it so the refusal
// the user sees is ours, with its reason, rather than the host's timeout.
const MAX_TIMEOUT_MS = 14000;
const VERDICTS = new Set(["allow", "ask", "deny"]);

type Settings = {
  url: string;
  tokenFile?: string;
  tokenEnv?: string;
  timeoutMs: number;
  detail: "minimal" | "layer" | "full";
  approvalTimeoutMs?: number;
  context: Record<string, unknown>;
};

// The parts of OpenClaw's before_tool_call event and tool-hook context the plugin reads.
type ToolCallEvent = {
  toolName: string;
  params: Record<string, unknown>;
  toolKind?: string;
};
type ToolHookContext = {
  agentId?: string;
  sessionKey?: string;
  channelId?: string;
  abortSignal?: AbortSignal;
  requester?: {
    readonly channel?: string;
    readonly accountId?: string;
    readonly senderId?: string;
    readonly senderIsOwner?: boolean;
  };
};
type HookResult =
  | { block: true; blockReason: string }
  | {
      requireApproval: {
        title: string;
        description: string;
        severity: "warning";
        timeoutMs?: number;
        allowedDecisions: Array<"allow-once" | "deny">;
      };
    };

class Refusal extends Error {}

function refuse(why: string): HookResult {
  return { block: true, blockReason: `policyctl: the call is refused: ${why}` };
}

/** The plugin's configuration, checked; a Refusal names what is wrong. */
export function readSettings(raw: unknown): Settings {
  const config = (raw ?? {}) as Record<string, unknown>;
  const url = config.url;
  if (typeof url !== "string" || !/^https?:\/\/[^/]/.test(url)) {
    throw new Refusal("plugins.entries.policyctl.config.url must be the decision server's http(s) URL");
  }
  const timeoutMs = config.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  if (typeof timeoutMs !== "number" || !(timeoutMs > 0 && timeoutMs <= MAX_TIMEOUT_MS)) {
    throw new Refusal(`config.timeoutMs must be a number of milliseconds from 1 to ${MAX_TIMEOUT_MS}`);
  }
  const detail = config.detail ?? "layer";
  if (detail !== "minimal" && detail !== "layer" && detail !== "full") {
    throw new Refusal("config.detail must be minimal, layer or full");
  }
  const context = config.context ?? {};
  if (typeof context !== "object" || context === null || Array.isArray(context)) {
    throw new Refusal("config.context must be an object of run-context fields");
  }
  return {
    url: url.replace(/\/+$/, ""),
    tokenFile: typeof config.tokenFile === "string" ? config.tokenFile : undefined,
    tokenEnv: typeof config.tokenEnv === "string" ? config.tokenEnv : undefined,
    timeoutMs,
    detail,
    approvalTimeoutMs: typeof config.approvalTimeoutMs === "number" ? config.approvalTimeoutMs : undefined,
    context: context as Record<string, unknown>,
  };
}

/** The bearer token, read at each call so a rotated token file takes effect at once. */
function bearerToken(settings: Settings): string | undefined {
  if (settings.tokenFile !== undefined) {
    let text: string;
    try {
      text = readFileSync(settings.tokenFile, "utf8");
    } catch (error) {
      throw new Refusal(`the token file ${settings.tokenFile} cannot be read (${describe(error)})`);
    }
    const token = text.split("\n").map((line) => line.trim()).find((line) => line !== "");
    if (!token) throw new Refusal(`the token file ${settings.tokenFile} is empty`);
    return token;
  }
  if (settings.tokenEnv !== undefined) {
    const token = process.env[settings.tokenEnv]?.trim();
    if (!token) throw new Refusal(`the environment variable ${settings.tokenEnv} holds no token`);
    return token;
  }
  return undefined;
}

/** policyctl's run context from what OpenClaw tells a tool hook; the configured fields fill in
 * what the hook does not carry (provider, model, workspace, ...), and never outrank it. */
export function runContext(ctx: ToolHookContext, settings: Settings): Record<string, unknown> {
  const context: Record<string, unknown> = { ...settings.context };
  const requester = ctx.requester ?? {};
  if (ctx.agentId) context.agent = ctx.agentId;
  if (ctx.sessionKey) context.sessionKey = ctx.sessionKey;
  const channel = requester.channel ?? ctx.channelId;
  if (channel) context.channel = channel;
  if (requester.accountId) context.account = requester.accountId;
  if (requester.senderId) {
    const sender = typeof context.sender === "object" && context.sender !== null ? context.sender : {};
    context.sender = { ...sender, id: requester.senderId };
  }
  // Only a sender OpenClaw resolved as an owner is one; an absent flag proves nothing.
  context.owner = requester.senderIsOwner === true;
  // The tools run on the gateway's machine, so `~/` in a rule means this process's home.
  if (context.home === undefined) context.home = homedir();
  return context;
}

function describe(error: unknown): string {
  if (error instanceof Error) {
    const cause = (error as { cause?: unknown }).cause;
    return cause instanceof Error ? `${error.message}: ${cause.message}` : error.message;
  }
  return String(error);
}

/** Ask the server about one call; a Refusal says why no decision could be had. */
async function askServer(
  settings: Settings,
  event: ToolCallEvent,
  ctx: ToolHookContext,
): Promise<{ verdict: string; reason: string }> {
  const headers: Record<string, string> = { "content-type": "application/json" };
  const token = bearerToken(settings);
  if (token !== undefined) headers.authorization = `Bearer ${token}`;
  // A tool the host tells apart by kind (code-mode `exec` runs JavaScript, not a shell line) is
  // asked about under that kind, so the shell rules of `exec` never pass it by mistake.
  const tool = event.toolKind ?? event.toolName;
  const body = JSON.stringify({
    tool,
    arguments: event.params ?? {},
    context: runContext(ctx, settings),
    detail: settings.detail,
  });
  const signals = [AbortSignal.timeout(settings.timeoutMs)];
  if (ctx.abortSignal) signals.push(ctx.abortSignal);
  let status: number;
  let text: string;
  try {
    const response = await fetch(`${settings.url}/v1/decide`, {
      method: "POST",
      headers,
      body,
      signal: AbortSignal.any(signals),
    });
    status = response.status;
    text = await response.text();
  } catch (error) {
    const timedOut = error instanceof Error && (error.name === "TimeoutError" || error.name === "AbortError");
    throw new Refusal(
      timedOut
        ? `the decision server at ${settings.url} did not answer within ${settings.timeoutMs} ms`
        : `the decision server at ${settings.url} cannot be reached (${describe(error)})`,
    );
  }
  let answer: unknown;
  try {
    answer = JSON.parse(text);
  } catch {
    answer = undefined;
  }
  const fields = (typeof answer === "object" && answer !== null ? answer : {}) as Record<string, unknown>;
  if (status < 200 || status > 299) {
    const error = fields.error as { code?: unknown; message?: unknown } | undefined;
    const said = error && typeof error.message === "string" ? `: ${String(error.code ?? "")} ${error.message}` : "";
    throw new Refusal(`the decision server answered HTTP ${status}${said}`);
  }
  if (typeof fields.verdict !== "string" || !VERDICTS.has(fields.verdict) || typeof fields.reason !== "string") {
    throw new Refusal("the decision server's answer is not a decision");
  }
  return { verdict: fields.verdict, reason: fields.reason };
}

/** The hook result for one call: undefined lets it proceed. Never throws. */
export async function decide(
  rawConfig: unknown,
  event: ToolCallEvent,
  ctx: ToolHookContext,
): Promise<HookResult | undefined> {
  try {
    const settings = readSettings(rawConfig);
    const { verdict, reason } = await askServer(settings, event, ctx);
    if (verdict === "allow") return undefined;
    if (verdict === "deny") return { block: true, blockReason: reason };
    return {
      requireApproval: {
        title: `policyctl: approve ${event.toolName}?`,
        description: reason,
        severity: "warning",
        ...(settings.approvalTimeoutMs !== undefined ? { timeoutMs: settings.approvalTimeoutMs } : {}),
        // Each asked call is approved once: the policy asks again next time.
        allowedDecisions: ["allow-once", "deny"],
      },
    };
  } catch (error) {
    return refuse(error instanceof Refusal ? error.message : `the plugin failed (${describe(error)})`);
  }
}

const plugin: OpenClawPluginDefinition = {
  id: "policyctl",
  name: "policyctl",
  description: "Asks a policyctl decision server before every tool call; fails closed.",
  register(api: OpenClawPluginApi) {
    api.on("before_tool_call", async (event, ctx) => {
      const result = await decide(api.pluginConfig, event, ctx);
      if (result && "block" in result && result.blockReason.startsWith("policyctl: the call is refused:")) {
        api.logger.warn(result.blockReason);
      }
      return result;
    });
  },
};

export default plugin;
