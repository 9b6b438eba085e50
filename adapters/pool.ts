/**
 * Runs `work` over `items` with at most `limit` in flight; reports progress after each item. After
 * the first failure no new item is started (those in flight finish), and that failure is thrown.
 */
export async function forEachLimited<T>(
  items: readonly T[],
  limit: number,
  work: (item: T, index: number) => Promise<void>,
  onProgress?: (done: number, total: number) => void,
): Promise<void> {
  let next = 0;
  let done = 0;
  let failed = false;
  const worker = async () => {
    while (!failed && next < items.length) {
      const index = next++;
      try {
        await work(items[index] as T, index);
      } catch (error) {
        failed = true;
        throw error;
      }
      onProgress?.(++done, items.length);
    }
  };
  const results = await Promise.allSettled(Array.from({ length: Math.min(limit, items.length) }, worker));
  const rejected = results.find((r): r is PromiseRejectedResult => r.status === 'rejected');
  if (rejected) throw rejected.reason;
}
