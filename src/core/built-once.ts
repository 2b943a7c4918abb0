// A value built by its first reader, then the same object for every other: how the catalog's
// schemas are given (src/core/capability.ts, CapabilitySpec, says why).
export function builtOnce<T>(build: () => T): () => T {
  let built: { value: T } | undefined;
  return () => (built ??= { value: build() }).value;
}
