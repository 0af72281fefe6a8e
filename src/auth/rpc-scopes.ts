/**
 * The operator's table of which scopes each RPC needs (A2A_AUTH_SCOPES):
 * `SendMessage=tasks.write,GetTask=tasks.read,*=a2a`. An RPC listed several times needs every
 * scope listed for it; `*` applies to every RPC not listed; an RPC with no entry (and no `*`)
 * needs none beyond a valid credential.
 */
export class RpcScopes {
  static readonly NONE = new RpcScopes(new Map());

  private constructor(private readonly byMethod: ReadonlyMap<string, readonly string[]>) {}

  /** Parses the setting's text; `methods` are the RPC names that may be named. Throws an Error saying what is wrong. */
  static parse(text: string, methods: readonly string[]): RpcScopes {
    const byMethod = new Map<string, string[]>();
    for (const entry of text
      .split(",")
      .map((e) => e.trim())
      .filter((e) => e !== "")) {
      const eq = entry.indexOf("=");
      const method = entry.slice(0, eq).trim();
      const scope = entry.slice(eq + 1).trim();
      if (eq < 1 || scope === "" || /\s/.test(scope)) throw new Error(`entry ${JSON.stringify(entry)} is not RPC=scope`);
      if (method !== "*" && !methods.includes(method)) throw new Error(`unknown RPC ${JSON.stringify(method)}; expected * or one of ${methods.join(", ")}`);
      const list = byMethod.get(method) ?? [];
      if (!list.includes(scope)) list.push(scope);
      byMethod.set(method, list);
    }
    return new RpcScopes(byMethod);
  }

  /** The scopes `method` needs (empty: none). */
  forMethod(method: string): readonly string[] {
    return this.byMethod.get(method) ?? this.byMethod.get("*") ?? [];
  }

  /** Scopes every RPC without an entry of its own needs: what the card's security requirements list. */
  get defaultScopes(): readonly string[] {
    return this.byMethod.get("*") ?? [];
  }

  /** The table as text, for the card's scheme descriptions. */
  describe(): string {
    return [...this.byMethod].map(([m, s]) => `${m}: ${s.join(" ")}`).join("; ");
  }

  get empty(): boolean {
    return this.byMethod.size === 0;
  }
}
