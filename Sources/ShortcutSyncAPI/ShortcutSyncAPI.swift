// The API's types, server protocol and client are generated at build time from openapi.yaml
// by the OpenAPI generator plugin; this file only gives the module a source of its own.
