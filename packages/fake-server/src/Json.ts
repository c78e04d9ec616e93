/**
 * JSON values as they travel on the wire.
 *
 * @since 0.1.0
 */

/**
 * @since 0.1.0
 * @category models
 */
export type Json = null | boolean | number | string | readonly Json[] | { readonly [key: string]: Json }

/**
 * @since 0.1.0
 * @category models
 */
export type JsonObject = { readonly [key: string]: Json }
