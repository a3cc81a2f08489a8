/**
 * Generic directed-graph routines for the MSCCL import's constraint graph (order.ts): strongly
 * connected components and a short cycle through an edge. Graphs are adjacency lists of edge
 * indices (adj[v] = the edges leaving v, to[i] = edge i's head); nothing here knows MSCCL.
 * Imports nothing.
 */

/** The nodes of a cycle through edge x -> y inside one component: y, ..., x (breadth first, so short). */
export function cyclePath(
  x: number,
  y: number,
  comp: Int32Array,
  adj: readonly (readonly number[])[],
  to: readonly number[],
): number[] {
  const prev = new Map<number, number>([[y, -1]]);
  const queue = [y];
  for (let h = 0; h < queue.length && !prev.has(x); h++) {
    const v = queue[h] as number;
    for (const i of adj[v] as readonly number[]) {
      const w = to[i] as number;
      if (comp[w] !== comp[y] || prev.has(w)) continue;
      prev.set(w, v);
      queue.push(w);
    }
  }
  const path: number[] = [];
  for (let v = x; v !== -1 && path.length <= prev.size; v = prev.get(v) ?? -1) path.push(v);
  return path.reverse();
}

/** Tarjan's strongly connected components, iteratively; components are numbered in reverse topological order. */
export function tarjan(n: number, adj: readonly (readonly number[])[], to: readonly number[]): Int32Array {
  const index = new Int32Array(n).fill(-1);
  const low = new Int32Array(n);
  const comp = new Int32Array(n).fill(-1);
  const onStack = new Uint8Array(n);
  const stack: number[] = [];
  let next = 0;
  let ncomp = 0;
  for (let root = 0; root < n; root++) {
    if (index[root] !== -1) continue;
    const work: [number, number][] = [[root, 0]];
    index[root] = low[root] = next++;
    stack.push(root);
    onStack[root] = 1;
    while (work.length > 0) {
      const top = work[work.length - 1] as [number, number];
      const [v, k] = top;
      const out = adj[v] as readonly number[];
      if (k < out.length) {
        top[1] = k + 1;
        const w = to[out[k] as number] as number;
        if (index[w] === -1) {
          index[w] = low[w] = next++;
          stack.push(w);
          onStack[w] = 1;
          work.push([w, 0]);
        } else if (onStack[w]) low[v] = Math.min(low[v] as number, index[w] as number);
        continue;
      }
      work.pop();
      if (work.length > 0) {
        const u = (work[work.length - 1] as [number, number])[0];
        low[u] = Math.min(low[u] as number, low[v] as number);
      }
      if (low[v] === index[v]) {
        for (;;) {
          const w = stack.pop() as number;
          onStack[w] = 0;
          comp[w] = ncomp;
          if (w === v) break;
        }
        ncomp++;
      }
    }
  }
  return comp;
}
