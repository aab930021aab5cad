// Object file for the shared precompiled header.
