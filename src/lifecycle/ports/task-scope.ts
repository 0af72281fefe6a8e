/**
 * Who a task belongs to: tenant and authenticated principal together (ruling A-22).
 * A task stored under one scope does not exist under any other. Its own file so that the push
 * ports, which the repository port names, need not import the repository port back.
 */
export interface TaskScope {
  readonly tenant: string;
  readonly principal: string;
}
