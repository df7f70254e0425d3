/** Free ports: the one implementation in scripts/src/net.ts. */
export { freePort } from '../../scripts/src/net';
