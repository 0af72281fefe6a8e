import { stat } from "node:fs/promises";
import { resolve } from "node:path";
import { pathToFileURL } from "node:url";
import type { Agent } from "../lifecycle/index.js";

// A variable, not a literal: the loader must not depend on the demo at compile time,
// and the demo is only loaded when no module is configured.
const DEMO_AGENT_MODULE = "./demo/demo-agent.js";

/**
 * Loads the agent the server runs. No path: the built-in demo agent. Otherwise an ES
 * module, resolved against the working directory, whose default export (or named
 * export `agent`) is an Agent or a factory returning one (possibly async).
 * Every failure names the module and says what is wrong, since this runs at start-up.
 */
export async function loadAgent(modulePath: string | undefined): Promise<Agent> {
  if (modulePath === undefined || modulePath.trim() === "") {
    return agentFrom(await import(DEMO_AGENT_MODULE), "the built-in demo agent");
  }
  const file = resolve(process.cwd(), modulePath);
  const name = `agent module ${JSON.stringify(modulePath)}`;
  const found = await stat(file).catch(() => undefined);
  if (!found) throw new Error(`${name} was not found (looked for ${file})`);
  if (!found.isFile()) throw new Error(`${name} is not a file (${file})`);

  let loaded: Record<string, unknown>;
  try {
    loaded = await import(pathToFileURL(file).href);
  } catch (error) {
    throw new Error(`${name} could not be loaded: ${(error as Error)?.message ?? String(error)}`, { cause: error });
  }
  return agentFrom(loaded, name);
}

async function agentFrom(loaded: Record<string, unknown>, name: string): Promise<Agent> {
  const exportName = loaded.default !== undefined ? "default export" : 'export "agent"';
  const exported = loaded.default ?? loaded.agent;
  if (exported === undefined || exported === null) {
    throw new Error(`${name} has no default export (and no export named "agent"); export an Agent or a function returning one`);
  }
  let agent: unknown = exported;
  if (typeof exported === "function") {
    try {
      // A class is constructed; any other function is a factory, possibly async.
      agent = isClass(exported) ? new (exported as new () => unknown)() : await (exported as () => unknown)();
    } catch (error) {
      throw new Error(`${name}'s ${exportName} threw while creating the agent: ${(error as Error)?.message ?? String(error)}`, {
        cause: error,
      });
    }
  }
  if (typeof agent !== "object" || agent === null || typeof (agent as Partial<Agent>).execute !== "function") {
    const what = typeof exported === "function" ? `${exportName} returned ${describe(agent)} that` : exportName;
    throw new Error(`${name}'s ${what} has no execute() method; an Agent needs execute(ctx)`);
  }
  return agent as Agent;
}

function isClass(fn: Function): boolean {
  return /^class[\s{]/.test(Function.prototype.toString.call(fn));
}

function describe(value: unknown): string {
  if (value === null) return "null";
  if (value === undefined) return "undefined";
  return typeof value === "object" ? "an object" : `a ${typeof value}`;
}
