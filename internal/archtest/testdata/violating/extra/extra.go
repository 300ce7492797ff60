// Package extra is in the module but not in the architecture.
package extra
