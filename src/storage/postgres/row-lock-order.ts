/**
 * Why every statement here that locks several task rows locks them in id order: two statements
 * that each lock rows the other wants, in different orders, deadlock (PostgreSQL then aborts one
 * of them, SQLSTATE 40P01). An UPDATE locks its rows in the order its plan reaches them, which
 * is the heap's order for one plan and the index's or an array's for another, so two statements
 * over the same rows (a lease renewal and a batch of task writes) could meet in opposite
 * orders. A sub-select `ORDER BY id FOR NO KEY UPDATE` locks its rows after sorting them, so
 * every statement built with this waits for rows in one order; the outer statement then only
 * touches rows it already holds. NO KEY UPDATE is the lock the UPDATE itself takes (it leaves
 * the key alone), so this adds no conflict with foreign-key checks of inserted children.
 */
export function lockedInIdOrder(where: string): string {
  return `SELECT id FROM a2a_tasks WHERE ${where} ORDER BY id FOR NO KEY UPDATE`;
}
