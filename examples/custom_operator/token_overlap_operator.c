/* An example custom operator library (docs/custom_operators.md), built by the project as
 * libtzrec_example_custom_operator.so and used by its tests. Two operators:
 *
 *   TokenOverlap   the number of values of input 0 that also occur among the values of input 1
 *                  (operator_params "min_length": values shorter than it are ignored; default 1)
 *   TokenPairs     one text value "a_b" for each pair of a value a of input 0 and b of input 1
 *
 * Build your own the same way: cc -shared -fPIC -I<repo>/include my_operator.c -o libmy_operator.so
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <tzrec/custom_operator.h>

typedef struct {
  size_t min_length;
} overlap_state;

/* operator_params arrive as JSON, e.g. {"min_length":2}; this example reads one number. */
static void* overlap_create(const char* params_json, char* error, size_t error_size) {
  overlap_state* state = (overlap_state*)malloc(sizeof(overlap_state));
  if (state == NULL) {
    snprintf(error, error_size, "out of memory");
    return NULL;
  }
  state->min_length = 1;
  const char* key = strstr(params_json, "\"min_length\"");
  if (key != NULL) {
    const char* colon = strchr(key, ':');
    char* end = NULL;
    double v = colon ? strtod(colon + 1, &end) : -1;
    if (colon == NULL || end == colon + 1 || v < 0) {
      snprintf(error, error_size, "min_length must be a non-negative number");
      free(state);
      return NULL;
    }
    state->min_length = (size_t)v;
  }
  return state;
}

static int same(tzrec_string_view a, tzrec_string_view b) {
  return a.size == b.size && memcmp(a.data, b.data, a.size) == 0;
}

static int overlap_evaluate(void* state, const tzrec_operator_input* inputs, size_t num_inputs,
                            tzrec_operator_output* out, const tzrec_operator_output_api* api, char* error,
                            size_t error_size) {
  const overlap_state* s = (const overlap_state*)state;
  if (num_inputs != 2) {
    snprintf(error, error_size, "TokenOverlap takes 2 inputs, got %zu", num_inputs);
    return 1;
  }
  size_t count = 0;
  for (size_t i = 0; i < inputs[0].num_values; ++i) {
    const tzrec_string_view a = inputs[0].values[i];
    if (a.size < s->min_length) continue;
    for (size_t j = 0; j < inputs[1].num_values; ++j) {
      if (same(a, inputs[1].values[j])) {
        ++count;
        break;
      }
    }
  }
  api->add_number(out, (double)count);
  return 0;
}

static void overlap_destroy(void* state) { free(state); }

static void* pairs_create(const char* params_json, char* error, size_t error_size) {
  (void)params_json;
  (void)error;
  (void)error_size;
  static int no_state;
  return &no_state; /* create must return non-NULL on success */
}

static int pairs_evaluate(void* state, const tzrec_operator_input* inputs, size_t num_inputs,
                          tzrec_operator_output* out, const tzrec_operator_output_api* api, char* error,
                          size_t error_size) {
  (void)state;
  if (num_inputs != 2) {
    snprintf(error, error_size, "TokenPairs takes 2 inputs, got %zu", num_inputs);
    return 1;
  }
  char buf[256];
  for (size_t i = 0; i < inputs[0].num_values; ++i) {
    for (size_t j = 0; j < inputs[1].num_values; ++j) {
      const tzrec_string_view a = inputs[0].values[i], b = inputs[1].values[j];
      if (a.size + b.size + 1 > sizeof(buf)) {
        snprintf(error, error_size, "values too long");
        return 1;
      }
      memcpy(buf, a.data, a.size);
      buf[a.size] = '_';
      memcpy(buf + a.size + 1, b.data, b.size);
      api->add_text(out, buf, a.size + b.size + 1);
    }
  }
  return 0;
}

static void pairs_destroy(void* state) { (void)state; }

static const tzrec_custom_operator kTokenOverlap = {TZREC_CUSTOM_OPERATOR_ABI_VERSION, 1, overlap_create,
                                                     overlap_evaluate, overlap_destroy};
static const tzrec_custom_operator kTokenPairs = {TZREC_CUSTOM_OPERATOR_ABI_VERSION, 1, pairs_create,
                                                   pairs_evaluate, pairs_destroy};

const tzrec_custom_operator* tzrec_get_custom_operator(const char* operator_name) {
  if (strcmp(operator_name, "TokenOverlap") == 0) return &kTokenOverlap;
  if (strcmp(operator_name, "TokenPairs") == 0) return &kTokenPairs;
  return NULL;
}
