package fstools

import "embed"

// schemaFiles are the tools' JSON schemas, generated from their argument
// and result types by TestSchemas (go test -run TestSchemas -update-schemas)
// and embedded, so start-up does not reflect over the types.
//
//go:embed schemas
var schemaFiles embed.FS
