#include "cli/app.h"

int main(int argc, char** argv) { return tzrec::cli::run(argc, argv); }
