/**
 * The first import of every program's entry: refuses an unsupported Node.js before any other module loads
 * (node-version.ts). A side effect on import on purpose: an import that comes first runs first.
 */
import { refuseUnsupportedNode } from './node-version';

refuseUnsupportedNode('main');
