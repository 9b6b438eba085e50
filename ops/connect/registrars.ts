/**
 * The providers whose API registers a webhook endpoint, each name mapped to its registrar's factory.
 * A source's provider not listed here has no registration API (`connect` lists these names).
 */
import { githubRegistrar } from './github';
import { paddleRegistrar } from './paddle';
import { squareRegistrar } from './square';
import { stripeRegistrar } from './stripe';
import type { RegistrarFactory } from './types';

export const REGISTRARS: Readonly<Record<string, RegistrarFactory>> = {
  stripe: stripeRegistrar,
  github: githubRegistrar,
  square: squareRegistrar,
  paddle: paddleRegistrar,
};
