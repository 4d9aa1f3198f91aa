// Package event defines Neuraphage's typed events and the in-process bus that fans
// them out to subscribers: the API's watch streams, the executor's scheduler and
// the supervisors (the Watcher, the Syncer, the main watcher).
//
// # Events
//
// An Event is a kind, a time, an optional task and a typed Payload; there are no
// map[string]any payloads. Kinds form an open set: each payload type names its kind,
// and each capability adds its own payload types in this package (lifecycle,
// agent observations, supervision, sync, git and merge events). A payload whose kind this build
// does not know decodes as Unknown, keeping its raw JSON.
//
// # Classes and durability
//
// Every payload is either logged (the default) or transient (its type has a
// Transient method returning true).
//
//   - Logged events are appended to the event log in the store and get an ID there,
//     increasing in commit order. The store's single writer commits them in groups
//     (many events, one transaction) and hands each committed group to
//     Bus.Publish, in ID order. A logged event is therefore always in the store
//     before any subscriber sees it, and a reader can resume from any ID it saw.
//     Events that record a state change the daemon acknowledges to a client (task
//     created, status changed, message queued) are committed in the same
//     transaction as the change itself, before the acknowledgement, so a kill -9
//     never loses them. Events emitted without waiting (the hot path of
//     observations) may be lost on kill -9 only if
//     they were still queued for the writer: they are "droppable on crash".
//   - Transient events (streaming text deltas and the like) are never logged and
//     carry ID 0. They are published straight to the bus.
//
// # Delivery rules
//
//   - Order: each subscriber receives logged events in ID order, which is commit
//     order, so events of one task arrive in the order they happened. Transient
//     events are interleaved in publish order.
//   - Logged events must arrive: they are never dropped for a slow subscriber.
//     Publish never blocks: each subscription has its own queue. If a subscriber
//     falls so far behind that its queue holds Options.LagLimit events, the
//     subscription ends with ErrLagged rather than letting memory grow without
//     bound; the subscriber resumes from the log after the last ID it handled
//     (Follow does this by itself), so nothing is lost even then.
//   - Transient events may be dropped: when a subscriber's queue already holds
//     Options.Buffer events, a transient event is dropped for that subscriber
//     alone. Drops are counted per subscription and in Bus.Stats.
//   - A filter (task, kinds) is applied at publish time, so a subscriber's queue
//     only holds what it asked for.
package event
