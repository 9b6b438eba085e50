/** The providers' packages that ship no type declarations: only what the proofs call. */
declare module 'coinbase-commerce-node' {
  const coinbase: { Webhook: { verifySigHeader(payload: string, signature: string, secret: string): void } };
  export default coinbase;
}
declare module 'messagebird/lib/webhook-signature-jwt' {
  export function verify(url: string, payload: Buffer | string | null, jwt: string, key: import('node:crypto').KeyObject): Promise<true>;
}
