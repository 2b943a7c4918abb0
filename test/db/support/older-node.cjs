// Preloaded (NODE_OPTIONS=--require) into a `teaminfra` child process, this makes it read Node.js
// 20.19.0 in process.versions.node, as if that Node.js had started it. A real Node 20 would crash
// loading the SQLite driver (better-sqlite3 13), which is what teaminfra must refuse before it tries.
'use strict';
Object.defineProperty(process.versions, 'node', { value: '20.19.0' });
