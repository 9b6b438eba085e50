/** The providers' packages that ship no type declarations: only what the proofs call. */
declare module 'coinbase-commerce-node' {
  const coinbase: { Webhook: { verifySigHeader(payload: string, signature: string, secret: string): void } };
  export default coinbase;
}
