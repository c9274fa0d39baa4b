// What BabelPulsarClient tells its `status` Observable. Kept apart because each publish confirms 'connected': the
// bookkeeping that tells a status only when it changes would otherwise sit among the publish path's steps.
export type BabelClientStatus = 'connected' | 'disconnected' | 'closed';

/** Tells a client's status when it changes, and only then. */
export class ClientStatus {
  /** The last status told; each publish confirms 'connected', which is told only when it changes. */
  private lastStatus: BabelClientStatus | null = null;

  /** `tell` hands a status to the client's `status` Observable. */
  constructor(private readonly tell: (status: BabelClientStatus) => void) {}

  set(status: BabelClientStatus): void {
    if (status === this.lastStatus) return;
    this.lastStatus = status;
    this.tell(status);
  }
}
