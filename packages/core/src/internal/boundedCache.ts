/**
 * A map that forgets its oldest entry past `size` (a Map keeps insertion order): the caches of
 * sealed values that `Encryption` and `EncryptedStore` keep, so that a value written again is not
 * sealed again.
 */
export class BoundedCache<K, V> {
  private readonly entries = new Map<K, V>()
  constructor(private readonly size: number) {}
  get(key: K): V | undefined {
    return this.entries.get(key)
  }
  set(key: K, value: V): void {
    if (this.entries.size >= this.size && !this.entries.has(key)) {
      const oldest = this.entries.keys().next()
      if (oldest.done !== true) this.entries.delete(oldest.value)
    }
    this.entries.set(key, value)
  }
}
