package cli

import (
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/neuraphage/neuraphage-go/internal/persona"
)

// personasNote is what every persona and workflow command says about where
// the definitions come from; their help repeats it.
const personasNote = `Personas are built in and changed, added or disabled in personas.yaml in the
configuration directory (` + "`neuraphage config path --json`" + ` shows where). These
commands read that file themselves and need no daemon; the daemon reads it when
it starts, so a change takes effect at its next start.`

func (a *app) newPersonaCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "persona",
		Short: "List and inspect the personas tasks run as",
		Long: `A persona is what a task runs as: a system prompt, traits and a model tier.
Tasks that name none are given one by the router persona.

` + personasNote,
		Args: noArgs,
		RunE: help,
	}
	cmd.AddCommand(a.newPersonaListCmd(), a.newPersonaShowCmd())
	return cmd
}

type personaOpts struct {
	json bool
}

func (a *app) newPersonaListCmd() *cobra.Command {
	var opts personaOpts
	cmd := &cobra.Command{
		Use:     "list",
		Aliases: []string{"ls"},
		Short:   "List the personas, built-in and your own",
		Long: `List shows every persona: NAME (what --persona takes), model TIER, ORIGIN
(built-in, overridden: built-in with fields personas.yaml sets, custom: added
there) and STATE (enabled or disabled; internal personas run Neuraphage itself
and are never given to tasks). A line under the table gives the default persona
and the escalation chain.

` + personasNote,
		Args: noArgs,
		RunE: a.run(func(cmd *cobra.Command, args []string) error {
			return a.runPersonaList(opts, cmd.OutOrStdout())
		}),
	}
	cmd.Flags().BoolVar(&opts.json, "json", false, `print {"file","file_exists","personas":[…],"task_defaults":{…}}`)
	return cmd
}

func (a *app) newPersonaShowCmd() *cobra.Command {
	var opts personaOpts
	cmd := &cobra.Command{
		Use:   "show NAME",
		Short: "Show one persona's effective definition, system prompt included",
		Long: `Show prints a persona as tasks get it: the built-in definition with the fields
personas.yaml sets laid over it (listed as overridden), its system prompt in
full, and where it stands in the escalation chain.

` + personasNote,
		Args: exactArgs("NAME"),
		RunE: a.run(func(cmd *cobra.Command, args []string) error {
			return a.runPersonaShow(opts, args[0], cmd.OutOrStdout())
		}),
	}
	cmd.Flags().BoolVar(&opts.json, "json", false, "print the persona as JSON")
	return cmd
}

// loadPersonas reads personas.yaml over the built-in personas. Its error is
// the file's *config.Error (file:line: key: what is wrong): like a broken
// config file, it fails the command (exit 1).
func (a *app) loadPersonas() (*persona.Set, string, error) {
	p, err := a.getPaths()
	if err != nil {
		return nil, "", err
	}
	s, err := persona.Load(p.Personas)
	if err != nil {
		return nil, p.Personas, err
	}
	return s, p.Personas, nil
}

// checkPersona refuses, as a usage error, a persona that a task cannot be
// given (flag is how the command line named it: --persona, --to). When
// personas.yaml cannot be read the name is let through: the daemon checks
// it again against the file it loaded.
func (a *app) checkPersona(flag, name string) error {
	s, _, err := a.loadPersonas()
	if err != nil {
		return nil
	}
	_, err = s.Assignable(name)
	return personaUsage(flag, err)
}

// personaUsage turns a *persona.UnknownError into a usage error whose hint
// lists the personas that would do.
func personaUsage(flag string, err error) error {
	var ue *persona.UnknownError
	if !errors.As(err, &ue) {
		return err
	}
	return &usageError{
		msg:  fmt.Sprintf("%s %q: %s", flag, ue.Name, ue.Why),
		hint: fmt.Sprintf("personas a task can be given: %s (`neuraphage persona list`)", strings.Join(ue.Valid, ", ")),
	}
}

// personaView is a persona as the CLI prints it in JSON: durations as
// text ("30s"), and whether a task may be given it.
type personaView struct {
	persona.Persona
	RunInterval string `json:"run_interval,omitempty"`
	Assignable  bool   `json:"assignable"`
}

func viewPersona(p persona.Persona) personaView {
	v := personaView{Persona: p, Assignable: p.Assignable()}
	if p.RunInterval > 0 {
		v.RunInterval = p.RunInterval.String()
	}
	return v
}

// taskDefaultsView is persona.TaskDefaults with the router timeout as text.
type taskDefaultsView struct {
	persona.TaskDefaults
	RouterTimeout string `json:"router_timeout"`
}

// personaList is what `persona list --json` prints.
type personaList struct {
	File         string           `json:"file"`
	FileExists   bool             `json:"file_exists"`
	Personas     []personaView    `json:"personas"`
	TaskDefaults taskDefaultsView `json:"task_defaults"`
}

func (a *app) runPersonaList(opts personaOpts, out io.Writer) error {
	s, file, err := a.loadPersonas()
	if err != nil {
		return err
	}
	if opts.json {
		l := personaList{File: file, FileExists: s.File != "", Personas: []personaView{},
			TaskDefaults: taskDefaultsView{TaskDefaults: s.Defaults, RouterTimeout: s.Defaults.RouterTimeout.String()}}
		if l.TaskDefaults.EscalationChain == nil {
			l.TaskDefaults.EscalationChain = []string{}
		}
		for _, p := range s.List() {
			l.Personas = append(l.Personas, viewPersona(p))
		}
		return writeJSON(out, l)
	}
	return writePersonaList(out, s, file)
}

// writePersonaList renders `persona list`: the table, then the default
// persona and the chain, then where the definitions come from.
func writePersonaList(out io.Writer, s *persona.Set, file string) error {
	tw := newTable(out)
	fmt.Fprintln(tw, "NAME\tTIER\tORIGIN\tSTATE\tDESCRIPTION")
	for _, p := range s.List() {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", p.Key, dash(string(p.Tier)), p.Origin, personaState(p), truncate(p.Description, 60))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	d := s.Defaults
	fmt.Fprintf(out, "default persona: %s; escalation chain: %s\n", d.DefaultPersona, chain(d.EscalationChain))
	if s.File == "" {
		fmt.Fprintf(out, "built-in personas only: there is no %s\n", file)
	} else {
		fmt.Fprintf(out, "from the built-in personas and %s\n", s.File)
	}
	return nil
}

// personaState: enabled or disabled, and internal for the personas that run
// Neuraphage itself.
func personaState(p persona.Persona) string {
	s := "enabled"
	if !p.Enabled {
		s = "disabled"
	}
	if p.Internal {
		s += ", internal"
	}
	return s
}

// chain renders an escalation chain: "junior → mid → senior".
func chain(c []string) string {
	if len(c) == 0 {
		return "none (task-defaults.escalation-chain is empty)"
	}
	return strings.Join(c, " → ")
}

func (a *app) runPersonaShow(opts personaOpts, name string, out io.Writer) error {
	s, _, err := a.loadPersonas()
	if err != nil {
		return err
	}
	p, ok := s.Get(name)
	if !ok {
		var names []string
		for _, p := range s.List() {
			names = append(names, p.Key)
		}
		return &usageError{
			msg:  fmt.Sprintf("no persona named %q", name),
			hint: fmt.Sprintf("personas: %s (`neuraphage persona list`)", strings.Join(names, ", ")),
		}
	}
	if opts.json {
		return writeJSON(out, viewPersona(p))
	}
	writePersona(out, s, p)
	return nil
}

// writePersona renders `persona show`: its fields, then the system prompt
// in full.
func writePersona(out io.Writer, s *persona.Set, p persona.Persona) {
	line := func(k, v string) {
		if v != "" {
			fmt.Fprintf(out, "%-13s %s\n", k+":", v)
		}
	}
	line("persona", p.Key)
	line("name", p.Name)
	line("description", p.Description)
	line("model tier", string(p.Tier))
	origin := p.Origin
	switch {
	case p.Origin == persona.Custom:
		origin += " (added in personas.yaml)"
	case len(p.Overridden) > 0:
		origin += " (personas.yaml sets " + strings.Join(p.Overridden, ", ") + "; the rest is built in)"
	}
	line("origin", origin)
	state := personaState(p)
	switch {
	case p.Internal:
		state += ": runs Neuraphage itself, never given to tasks"
	case !p.Enabled:
		state += ": tasks cannot be given it"
	}
	line("state", state)
	line("auto-assign", strings.Join(p.AutoAssign, ", "))
	if p.RunInterval > 0 {
		line("run interval", p.RunInterval.String())
	}
	d := s.Defaults
	if d.DefaultPersona == p.Key {
		line("default", "yes: tasks get it when they name no persona and the router gives no usable answer")
	}
	if i := slices.Index(d.EscalationChain, p.Key); i >= 0 {
		line("escalation", fmt.Sprintf("step %d of %d (%s)", i+1, len(d.EscalationChain), chain(d.EscalationChain)))
	}
	fmt.Fprintln(out, "system prompt:")
	writeBlock(out, "  ", "  ", p.SystemPrompt, 0, 0)
}
