//! Integration tests of the A2A server.
