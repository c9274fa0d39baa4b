// The publishes of BabelPulsarClient that are under way, which close() waits for before it closes the producers.
// Kept apart so that every publish path only hands its promise over, and close() only asks when they are settled.
export class InFlightPublishes {
  private readonly inFlight = new Set<Promise<unknown>>();

  /** Counts `promise` as under way until it settles; returns it as it is. */
  track<T>(promise: Promise<T>): Promise<T> {
    this.inFlight.add(promise);
    const forget = () => this.inFlight.delete(promise);
    promise.then(forget, forget);
    return promise;
  }

  /** Settles once every publish under way now has settled (a failed one included). */
  settled(): Promise<PromiseSettledResult<unknown>[]> {
    return Promise.allSettled([...this.inFlight]);
  }
}
