// Package archtest holds the test that guards the import graph: which packages
// may depend on which. It has no code of its own.
package archtest
