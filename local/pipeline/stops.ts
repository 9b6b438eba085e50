/**
 * What a pipeline started, stopped in the reverse order of start (storage last, so nothing is
 * still reading when it goes). A part that fails to stop does not keep the others running.
 */
export class StopList {
  private readonly parts: (() => Promise<unknown>)[] = [];

  add(stop: () => Promise<unknown>): void {
    this.parts.push(stop);
  }

  async stopAll(): Promise<void> {
    for (const stop of this.parts.splice(0).reverse()) await stop().catch(() => undefined);
  }
}
