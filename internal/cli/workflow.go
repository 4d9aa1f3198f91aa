package cli

import (
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/neuraphage/neuraphage-go/internal/persona"
	"github.com/neuraphage/neuraphage-go/internal/task"
)

func (a *app) newWorkflowCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "workflow",
		Short: "List and inspect the named workflows of personas.yaml",
		Long: `A workflow runs a task as phases, each by one persona or several at once (a
parallel review), one after another on the same branch; a review phase's
findings go to the later phases. ` + "`task new --workflow NAME`" + ` starts one of the
named workflows listed here, ` + "`task new --workflow FILE`" + ` one written in a file.

` + personasNote,
		Args: noArgs,
		RunE: help,
	}
	cmd.AddCommand(a.newWorkflowListCmd(), a.newWorkflowShowCmd())
	return cmd
}

type workflowOpts struct {
	json bool
}

func (a *app) newWorkflowListCmd() *cobra.Command {
	var opts workflowOpts
	cmd := &cobra.Command{
		Use:     "list",
		Aliases: []string{"ls"},
		Short:   "List the named workflows and their phases",
		Args:    noArgs,
		RunE: a.run(func(cmd *cobra.Command, args []string) error {
			return a.runWorkflowList(opts, cmd.OutOrStdout())
		}),
	}
	cmd.Flags().BoolVar(&opts.json, "json", false, `print {"file","workflows":[…]}`)
	return cmd
}

func (a *app) newWorkflowShowCmd() *cobra.Command {
	var opts workflowOpts
	cmd := &cobra.Command{
		Use:   "show NAME",
		Short: "Show one named workflow: its phases, personas and instructions",
		Args:  exactArgs("NAME"),
		RunE: a.run(func(cmd *cobra.Command, args []string) error {
			return a.runWorkflowShow(opts, args[0], cmd.OutOrStdout())
		}),
	}
	cmd.Flags().BoolVar(&opts.json, "json", false, `print {"name","phases":[…],"origin"}`)
	return cmd
}

// workflowList is what `workflow list --json` prints.
type workflowList struct {
	File      string             `json:"file"`
	Workflows []persona.Workflow `json:"workflows"`
}

func (a *app) runWorkflowList(opts workflowOpts, out io.Writer) error {
	s, file, err := a.loadPersonas()
	if err != nil {
		return err
	}
	ws := s.Workflows()
	if opts.json {
		if ws == nil {
			ws = []persona.Workflow{}
		}
		return writeJSON(out, workflowList{File: file, Workflows: ws})
	}
	if len(ws) == 0 {
		fmt.Fprintf(out, "no named workflows: add them under workflows: in %s\n", file)
		return nil
	}
	tw := newTable(out)
	fmt.Fprintln(tw, "NAME\tORIGIN\tPHASES")
	for _, w := range ws {
		fmt.Fprintf(tw, "%s\t%s\t%s\n", w.Name, w.Origin, phasesLine(w.Phases))
	}
	return tw.Flush()
}

func (a *app) runWorkflowShow(opts workflowOpts, name string, out io.Writer) error {
	s, _, err := a.loadPersonas()
	if err != nil {
		return err
	}
	w, ok := s.Workflow(name)
	if !ok {
		return unknownWorkflow(s, fmt.Sprintf("no workflow named %q", name), "")
	}
	if opts.json {
		return writeJSON(out, w)
	}
	fmt.Fprintf(out, "workflow %s (%s): %d phase%s\n", w.Name, w.Origin, len(w.Phases), plural(len(w.Phases)))
	writePhases(out, "", w.Phases, 0)
	return nil
}

// unknownWorkflow is the usage error for a workflow name personas.yaml
// does not define; the hint lists the names it does, then more.
func unknownWorkflow(s *persona.Set, msg, more string) error {
	var names []string
	for _, w := range s.Workflows() {
		names = append(names, w.Name)
	}
	hint := "personas.yaml defines no workflows"
	if len(names) > 0 {
		hint = fmt.Sprintf("workflows: %s (`neuraphage workflow list`)", strings.Join(names, ", "))
	}
	return &usageError{msg: msg, hint: hint + more}
}

// phasesLine renders phases on one line:
// "design (architect) → review (reviewer, senior) → revise (mid)".
func phasesLine(phases []task.Phase) string {
	parts := make([]string, len(phases))
	for i, p := range phases {
		parts[i] = fmt.Sprintf("%s (%s)", p.Name, strings.Join(p.Personas, ", "))
	}
	return strings.Join(parts, " → ")
}

// writePhases renders phases one per line, numbered from 1, each with its
// instructions below it (at most maxLines lines, 0: all), every line after
// indent.
func writePhases(out io.Writer, indent string, phases []task.Phase, maxLines int) {
	for i, p := range phases {
		var notes []string
		if len(p.Personas) > 1 {
			notes = append(notes, "in parallel")
		}
		if p.Review {
			notes = append(notes, "review: its findings go to the later phases")
		}
		s := fmt.Sprintf("%s%d %s: %s", indent, i+1, p.Name, strings.Join(p.Personas, ", "))
		if len(notes) > 0 {
			s += " (" + strings.Join(notes, "; ") + ")"
		}
		fmt.Fprintln(out, s)
		if p.Instructions != "" {
			writeBlock(out, indent+"    ", indent+"    ", p.Instructions, maxLines, 0)
		}
	}
}

// resolveWorkflow reads `task new --workflow ARG`: the phases (and the
// description it gives, if any) of the workflow file ARG names, or else of
// the named workflow ARG. Mistakes in the file, or an unknown name, are
// usage errors; the file's name file:line.
func resolveWorkflow(s *persona.Set, arg string) ([]task.Phase, string, error) {
	if fi, err := os.Stat(arg); err == nil && !fi.IsDir() {
		data, err := os.ReadFile(arg)
		if err != nil {
			return nil, "", fmt.Errorf("reading workflow file: %w", err)
		}
		phases, desc, err := s.ParseWorkflow(arg, data)
		if err != nil {
			return nil, "", &usageError{msg: err.Error(),
				hint: "a workflow file holds `workflow:`, a list of phases (phase, persona or personas, mode, review, instructions), and may give `description:`; `neuraphage workflow show NAME` shows a named one"}
		}
		return phases, desc, nil
	}
	w, ok := s.Workflow(arg)
	if !ok {
		return nil, "", unknownWorkflow(s, fmt.Sprintf("--workflow %q: no such file, and no workflow of that name in personas.yaml", arg), "; or the path of a workflow file")
	}
	return w.Phases, "", nil
}
