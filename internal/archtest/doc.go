// Package archtest holds the tests that guard the module's shape: which
// packages may depend on which, that every package says in its doc comment
// what it is for, and that test helpers stay out of the code the daemon
// runs. It has no code of its own.
package archtest
