/* The C ABI of custom_feature operators (docs/custom_operators.md).
 *
 * A custom operator library is a shared object (.so) that exports one function,
 *
 *     const tzrec_custom_operator* tzrec_get_custom_operator(const char* operator_name);
 *
 * returning the operator the config's `operator_name` names, or NULL when the library has no
 * such operator. The engine calls it once per feature when the config is loaded, then:
 *
 *   create(params_json)   once, with the feature's operator_params as a JSON object text
 *                         ("{}" when unset); returns the operator's state (NULL on error, with
 *                         a message in `error`);
 *   evaluate(state, ...)  once per row (per item of a sequence feature), with the values of
 *                         each input (the feature's `expression` entries, in order): a text
 *                         input split by the feature's `separator`, a list column's elements,
 *                         numbers as their decimal text. The operator adds the row's output
 *                         values (numbers or texts) through `api`; returns 0, or non-zero with a
 *                         message in `error` (the row is then a data error naming file and row);
 *   destroy(state)        when the feature is released.
 *
 * evaluate() is called from several loader threads at once when the operator sets
 * `thread_safe` (or the config sets is_op_thread_safe); otherwise calls are serialized.
 * All strings are UTF-8 (or bytes) with explicit sizes, not NUL-terminated; they are valid only
 * during the call. Error messages are written NUL-terminated into `error` (capacity
 * `error_size`). The ABI only grows: a new version adds fields at the end of the structs and a
 * library states the version it was built for in `abi_version`.
 */
#ifndef TZREC_CUSTOM_OPERATOR_H_
#define TZREC_CUSTOM_OPERATOR_H_

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define TZREC_CUSTOM_OPERATOR_ABI_VERSION 1u

typedef struct tzrec_string_view {
  const char* data;
  size_t size;
} tzrec_string_view;

/* The values of one input for one row. */
typedef struct tzrec_operator_input {
  const tzrec_string_view* values;
  size_t num_values;
} tzrec_operator_input;

/* Where evaluate() writes a row's values; opaque to the operator. */
typedef struct tzrec_operator_output tzrec_operator_output;

typedef struct tzrec_operator_output_api {
  void (*add_number)(tzrec_operator_output* out, double value);
  void (*add_text)(tzrec_operator_output* out, const char* data, size_t size);
} tzrec_operator_output_api;

typedef struct tzrec_custom_operator {
  uint32_t abi_version; /* TZREC_CUSTOM_OPERATOR_ABI_VERSION the library was built with */
  int thread_safe;      /* non-zero: evaluate() may run concurrently on one state */
  void* (*create)(const char* params_json, char* error, size_t error_size);
  int (*evaluate)(void* state, const tzrec_operator_input* inputs, size_t num_inputs, tzrec_operator_output* out,
                  const tzrec_operator_output_api* api, char* error, size_t error_size);
  void (*destroy)(void* state);
} tzrec_custom_operator;

/* The symbol every custom operator library exports. */
typedef const tzrec_custom_operator* (*tzrec_get_custom_operator_fn)(const char* operator_name);
#define TZREC_GET_CUSTOM_OPERATOR_SYMBOL "tzrec_get_custom_operator"

#ifdef __cplusplus
}
#endif

#endif /* TZREC_CUSTOM_OPERATOR_H_ */
