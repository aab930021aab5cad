#include "base/malloc_tuning.h"
#include "cli/app.h"

int main(int argc, char** argv) {
  tzrec::tune_malloc_for_training();
  return tzrec::cli::run(argc, argv);
}
