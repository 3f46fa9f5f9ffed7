#!/bin/sh
# Runs Debian's protoc (protobuf-compiler); the C++ runtime it matches is libprotobuf-dev.
exec /usr/bin/protoc "$@"
