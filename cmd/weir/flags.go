// SPDX-License-Identifier: Apache-2.0

package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
)

// The conventions of every (sub)command, kept here once:
//   - -h, -help or --help prints the command's help to standard output,
//     once, and exits 0;
//   - a usage error (an unknown flag, a bad flag value, a missing or extra
//     argument) prints the error and the help to standard error and exits 2;
//   - any other failure prints "weir CMD: error" and exits 1;
//   - "weir log monitor" exits 3 (exitAlarm) when it raised an alarm about
//     the log it watches, which is neither of the above.

// newFlagSet makes the flag set of "weir SYNOPSIS": name is the command
// ("certs revoke"), synopsis its usage line without "weir ", about what it
// does. The flag package's own usage printing is switched off; parseFlags
// and usageError print the help instead, so it is printed once.
func newFlagSet(name, synopsis, about string, stderr io.Writer) *cmdFlags {
	fs := &cmdFlags{FlagSet: flag.NewFlagSet(name, flag.ContinueOnError)}
	fs.SetOutput(stderr)
	fs.Usage = func() {}
	fs.help = func(w io.Writer) {
		fmt.Fprintf(w, "Usage: weir %s\n\n%s\n", synopsis, about)
		n := 0
		fs.VisitAll(func(*flag.Flag) { n++ })
		if n > 0 {
			fmt.Fprintf(w, "\nFlags:\n")
			out := fs.Output()
			fs.SetOutput(w)
			fs.PrintDefaults()
			fs.SetOutput(out)
		}
	}
	return fs
}

// cmdFlags is a command's flag set and its help.
type cmdFlags struct {
	*flag.FlagSet
	help func(w io.Writer)
}

// parseFlags parses args. It returns ok when the command should go on;
// otherwise the exit code: 0 after printing the help that -h asked for,
// 2 after a usage error (the flag package printed it; the help follows).
func parseFlags(fs *cmdFlags, args []string, stdout io.Writer) (int, bool) {
	switch err := fs.Parse(args); {
	case err == nil:
		return 0, true
	case errors.Is(err, flag.ErrHelp):
		fs.help(stdout)
		return 0, false
	}
	fmt.Fprintln(fs.Output())
	fs.help(fs.Output())
	return 2, false
}

// parseInterspersed parses fs over args, allowing flags after positional
// arguments ("certs revoke SERIAL --reason keyCompromise"), and returns the
// positional arguments, or the exit code as parseFlags does.
func parseInterspersed(fs *cmdFlags, args []string, stdout io.Writer) ([]string, int, bool) {
	var pos []string
	for {
		if code, ok := parseFlags(fs, args, stdout); !ok {
			return nil, code, false
		}
		rest := fs.Args()
		if len(rest) == 0 {
			return pos, 0, true
		}
		pos = append(pos, rest[0])
		args = rest[1:]
	}
}

// usageError reports a usage error found after parsing (a missing or
// extra argument) with the help, and returns exit code 2.
func usageError(fs *cmdFlags, stderr io.Writer, msg string) int {
	fmt.Fprintf(stderr, "weir %s: %s\n\n", fs.Name(), msg)
	fs.help(stderr)
	return 2
}

// fail prints a command error and returns exit code 1.
func fail(stderr io.Writer, cmd string, err error) int {
	fmt.Fprintf(stderr, "weir %s: %v\n", cmd, err)
	return 1
}

// parseNoArgs parses a command that takes flags only (anywhere on the
// line), as parseInterspersed does; an argument is a usage error.
func parseNoArgs(fs *cmdFlags, args []string, stdout, stderr io.Writer) (int, bool) {
	pos, code, ok := parseInterspersed(fs, args, stdout)
	if !ok {
		return code, false
	}
	if len(pos) > 0 {
		return usageError(fs, stderr, fmt.Sprintf("unexpected argument %q", pos[0])), false
	}
	return 0, true
}

// helpArgs reads the help forms at the head of a dispatcher's arguments:
// -h, -help, --help and a bare "help" ask for the dispatcher's own help
// (own); "help X Y" becomes "X Y -h".
func helpArgs(args []string) (own bool, rest []string) {
	if len(args) == 0 {
		return false, args
	}
	switch args[0] {
	case "-h", "-help", "--help":
		return true, nil
	case "help":
		if len(args) == 1 {
			return true, nil
		}
		return false, append(append([]string(nil), args[1:]...), "-h")
	}
	return false, args
}
