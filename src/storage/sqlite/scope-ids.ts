import type { TaskScope } from "../../lifecycle/index.js";
import type { TaskStatements } from "./task-statements.js";

/** Scope ids cached at most; past it the cache starts over. */
const SCOPE_CACHE_LIMIT = 10_000;

/**
 * The ids of scopes (tenant and principal) in the `scopes` table, interned. Why two levels of
 * maps: a joined string key cost a JSON.stringify per call.
 */
export class ScopeIds {
  private readonly ids = new Map<string, Map<string, number>>();
  private count = 0;

  constructor(
    private readonly statements: Pick<TaskStatements, "findScope" | "addScope">,
    /** Runs a store operation; damage found on disk becomes a SqliteStoreError naming the file. */
    private readonly guarded: <T>(operation: () => T) => T,
  ) {}

  /** Scope ids are interned; a scope that has never stored a task has no id and no tasks. */
  of(scope: TaskScope, createIfMissing: boolean): number | undefined {
    return this.knownScopeId(scope) ?? (createIfMissing ? this.addScope(scope) : this.findScope(scope));
  }

  private knownScopeId(scope: TaskScope): number | undefined {
    return this.ids.get(scope.tenant)?.get(scope.principal);
  }

  /**
   * Stores the scope row at once, in a transaction of its own (the batch is written only at
   * commit), so the cached id never points at a row that a lost batch took with it.
   */
  private addScope(scope: TaskScope): number {
    return this.guarded(() => {
      this.statements.addScope.run(scope.tenant, scope.principal);
      return this.findScope(scope)!;
    });
  }

  private findScope(scope: TaskScope): number | undefined {
    const id = this.statements.findScope.get(scope.tenant, scope.principal) as number | undefined;
    if (id !== undefined) {
      if (this.count >= SCOPE_CACHE_LIMIT) {
        this.ids.clear();
        this.count = 0;
      }
      let byPrincipal = this.ids.get(scope.tenant);
      if (byPrincipal === undefined) this.ids.set(scope.tenant, (byPrincipal = new Map()));
      if (!byPrincipal.has(scope.principal)) this.count++;
      byPrincipal.set(scope.principal, id);
    }
    return id;
  }
}
