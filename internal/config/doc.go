// Package config holds Neuraphage's configuration: where its files live
// ([ResolvePaths]), what settings exist and their defaults ([Config],
// [Default]), and how they are read, checked, shown and edited ([Load],
// [Config.Validate], [Get], [Marshal], [Set]).
//
// # Files and paths
//
// NEURAPHAGE_HOME, when set, relocates everything under one directory
// (config/, data/, run/, logs/). Otherwise the XDG base directories are used.
// docs/config.md has the full table and a reference for every key.
//
// # Strict loading
//
// [Load] parses the file into a yaml.Node tree and walks it together with the
// Go struct by reflection, matching `yaml:"name"` tags. Anything the struct
// does not declare is an error, and every error is an [*Error] naming the file,
// the line and the dotted key ("daemon.shutdown_timeout_secs"). Keys absent
// from the file, and keys whose value is null (an empty "daemon:" section, for
// example), keep their defaults. Maps merge into their defaults; lists replace
// them. An empty list or mapping leaves an empty (or nil) default as it is, so
// that the output of [Marshal], which writes nil as [] or {}, loads back
// unchanged. Integer fields accept only YAML integers (yaml.v3 alone would
// truncate 1.5 to 1). Types that implement yaml.Unmarshaler or encoding.TextUnmarshaler,
// and time.Duration, are decoded by yaml.v3 itself.
//
// # Adding a section
//
// A section needs no code in the loader, [Get], [Set] or [Keys]:
//
//  1. Add a field to [Config] with a `yaml:"name"` tag. Its type may live in
//     another package and may nest structs, slices of structs, maps with string
//     keys, slices of scalars and scalars (string, bool, ints, floats,
//     time.Duration).
//  2. Set its defaults in [Default].
//  3. Give the section type a method Validate() error (the [Validator]
//     interface). [Config.Validate] calls it on the outermost struct in each
//     branch that has one; that method is responsible for everything beneath it.
//  4. Document its keys in docs/config.md.
//
// A section's Validate points at one of its keys by returning an error that
// implements [FieldError]: ConfigField returns the key relative to the section
// ("tiers.worker.provider") and the message. The section's package need not
// import this one (which would be an import cycle, since this package imports
// the section's type): any error type with that method works, found with
// errors.As and, for errors.Join trees, the first joined error. An error that
// does not implement [FieldError] is reported against the section's own key.
// [Config.Validate] prefixes the section's dotted path and [Load] adds the
// file and the line of the deepest key that the file contains.
//
// # Editing
//
// [Set] edits the yaml.Node tree rather than re-marshalling a Config, so
// comments, key order and every other setting survive; the result must pass
// the same checks as [Load] before it is written atomically. Two concurrent
// Sets on the same file may lose one of the updates (last rename wins).
package config
