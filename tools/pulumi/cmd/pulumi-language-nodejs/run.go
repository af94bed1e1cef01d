package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"time"

	"github.com/google/shlex"
	"google.golang.org/protobuf/types/known/structpb"

	sdk "github.com/pulumi/pulumi/sdk/v3"
	"github.com/pulumi/pulumi/sdk/v3/go/common/resource/config"
	"github.com/pulumi/pulumi/sdk/v3/go/common/util/rpcutil"
	"github.com/pulumi/pulumi/sdk/v3/nodejs/npm"
	pulumirpc "github.com/pulumi/pulumi/sdk/v3/proto/go"
)

// bailExitCode is the Node SDK's "the user has already been shown an actionable error" exit code.
const bailExitCode = 32

// options are the runtime options of Pulumi.yaml (`runtime.options`) the host reads.
type options struct {
	typescript     bool
	tsconfigPath   string
	nodeArgs       []string
	packageManager npm.PackageManagerType
	production     bool
}

// parseOptions reads the runtime options with upstream's defaults (typescript on, package manager
// auto) and types; nodeargs is split as a shell splits words (quotes and escapes), as upstream's
// shlex.Split does, so `--require "./a b.js"` is two arguments.
func parseOptions(raw *structpb.Struct) (options, error) {
	opts := options{typescript: true, packageManager: npm.AutoPackageManager}
	m := raw.AsMap()
	if err := typedOption(m, "typescript", "a boolean", &opts.typescript); err != nil {
		return opts, err
	}
	if err := typedOption(m, "tsconfig", "a string", &opts.tsconfigPath); err != nil {
		return opts, err
	}
	if err := typedOption(m, "production", "a boolean", &opts.production); err != nil {
		return opts, err
	}
	var nodeArgs string
	if err := typedOption(m, "nodeargs", "a string", &nodeArgs); err != nil {
		return opts, err
	}
	args, err := shlex.Split(nodeArgs)
	if err != nil {
		return opts, fmt.Errorf("runtime option nodeargs %q: %w", nodeArgs, err)
	}
	opts.nodeArgs = args
	if v, ok := m["packagemanager"]; ok {
		s, _ := v.(string)
		known := map[string]npm.PackageManagerType{
			"auto": npm.AutoPackageManager, "npm": npm.NpmPackageManager, "yarn": npm.YarnPackageManager,
			"pnpm": npm.PnpmPackageManager, "bun": npm.BunPackageManager,
		}
		manager, isKnown := known[s]
		if !isKnown {
			return opts, fmt.Errorf("runtime option packagemanager must be one of auto, npm, yarn, pnpm or bun, got %v", v)
		}
		opts.packageManager = manager
	}
	return opts, nil
}

// typedOption sets *into from the option when it is present, or names the option and the type it must have.
func typedOption[T any](m map[string]any, name, kind string, into *T) error {
	v, ok := m[name]
	if !ok {
		return nil
	}
	typed, ok := v.(T)
	if !ok {
		return fmt.Errorf("runtime option %s must be %s, got %v", name, kind, v)
	}
	*into = typed
	return nil
}

func (o options) env() []string {
	var env []string
	if o.typescript {
		env = append(env, "PULUMI_NODEJS_TYPESCRIPT=true")
	}
	if o.tsconfigPath != "" {
		env = append(env, "PULUMI_NODEJS_TSCONFIG_PATH="+o.tsconfigPath)
	}
	return env
}

// resolveModule finds a module of the Pulumi Node SDK the way the program itself would: with
// node's require.resolve, from the program's directory.
func resolveModule(ctx context.Context, node, dir, module, installHint string) (string, error) {
	script := fmt.Sprintf("try { console.log(require.resolve(%q)) } catch (e) { console.error(e.code === 'MODULE_NOT_FOUND' ? 'It looks like the Pulumi SDK has not been installed. Have you run %s?' : e.message); process.exit(1) }", module, installHint)
	cmd := exec.CommandContext(ctx, node, "-e", script)
	cmd.Dir = dir
	out, err := cmd.Output()
	if err != nil {
		var exitErr *exec.ExitError
		if errors.As(err, &exitErr) {
			return "", errors.New(strings.TrimSpace(string(exitErr.Stderr)))
		}
		return "", err
	}
	return strings.TrimSpace(string(out)), nil
}

func configEnv(req *pulumirpc.RunRequest) ([]string, error) {
	// The Node SDK reads keys in the `<namespace>:config:<name>` form (and the newer one too).
	cfg := map[string]string{}
	for k, v := range req.GetConfig() {
		key, err := config.ParseKey(k)
		if err != nil {
			return nil, fmt.Errorf("configuration key %q: %w", k, err)
		}
		cfg[key.Namespace()+":config:"+key.Name()] = v
	}
	cfgJSON, err := json.Marshal(cfg)
	if err != nil {
		return nil, err
	}
	secretKeys := req.GetConfigSecretKeys()
	if secretKeys == nil {
		secretKeys = []string{}
	}
	secretJSON, err := json.Marshal(secretKeys)
	if err != nil {
		return nil, err
	}
	return []string{"PULUMI_CONFIG=" + string(cfgJSON), "PULUMI_CONFIG_SECRET_KEYS=" + string(secretJSON)}, nil
}

// runArguments are the arguments of @pulumi/pulumi/cmd/run after the script's path.
func runArguments(req *pulumirpc.RunRequest, runPath, engine string) []string {
	args := []string{runPath}
	add := func(flag, value string) {
		if value != "" {
			args = append(args, "--"+flag, value)
		}
	}
	add("monitor", req.GetMonitorAddress())
	add("engine", engine)
	add("organization", req.GetOrganization())
	add("project", req.GetProject())
	add("root-directory", req.GetInfo().GetRootDirectory())
	add("stack", req.GetStack())
	add("pwd", req.GetInfo().GetProgramDirectory())
	if req.GetDryRun() {
		args = append(args, "--dry-run")
	}
	add("parallel", strconv.Itoa(int(req.GetParallel())))
	entry := req.GetInfo().GetEntryPoint()
	if entry == "" {
		entry = "."
	}
	args = append(args, entry)
	return append(args, req.GetArgs()...)
}

// start runs cmd as a child the host waits for before it exits.
func (h *host) start(cmd *exec.Cmd) error {
	if err := cmd.Start(); err != nil {
		return err
	}
	h.children.Add(1)
	return nil
}

func (h *host) wait(cmd *exec.Cmd) error {
	defer h.children.Done()
	return cmd.Wait()
}

func (h *host) Run(ctx context.Context, req *pulumirpc.RunRequest) (*pulumirpc.RunResponse, error) {
	if req.GetAttachDebugger() {
		return &pulumirpc.RunResponse{Error: "this language host does not attach debuggers"}, nil
	}
	node, err := exec.LookPath("node")
	if err != nil {
		return &pulumirpc.RunResponse{Error: fmt.Sprintf("could not find node on the $PATH: %v", err)}, nil
	}
	dir := req.GetInfo().GetProgramDirectory()
	runPath, err := resolveModule(ctx, node, dir, "@pulumi/pulumi/cmd/run", "pulumi install")
	if err != nil {
		return &pulumirpc.RunResponse{Error: err.Error()}, nil
	}
	opts, err := parseOptions(req.GetInfo().GetOptions())
	if err != nil {
		return &pulumirpc.RunResponse{Error: err.Error()}, nil
	}
	cfg, err := configEnv(req)
	if err != nil {
		return &pulumirpc.RunResponse{Error: err.Error()}, nil
	}

	// Ended by Cancel (h.runs), by the end of the request, and by the host's own end.
	runCtx, stop := context.WithCancel(h.runs)
	defer stop()
	context.AfterFunc(ctx, stop)
	args := append(append([]string{}, opts.nodeArgs...), runArguments(req, runPath, h.engine())...)
	cmd := exec.CommandContext(runCtx, node, args...)
	cmd.Cancel = func() error { return cmd.Process.Signal(os.Interrupt) }
	cmd.WaitDelay = 5 * time.Second
	cmd.Env = append(append(os.Environ(), cfg...), opts.env()...)
	// Node may make its stdio non-blocking; wrapping the writers keeps the host's own files blocking.
	cmd.Stdout = struct{ io.Writer }{os.Stdout}
	cmd.Stderr = struct{ io.Writer }{os.Stderr}

	if err = h.start(cmd); err == nil {
		err = h.wait(cmd)
	}
	_ = os.Stdout.Sync()
	_ = os.Stderr.Sync()
	if err == nil {
		return &pulumirpc.RunResponse{}, nil
	}
	var exitErr *exec.ExitError
	if errors.As(err, &exitErr) {
		if exitErr.ExitCode() == bailExitCode {
			return &pulumirpc.RunResponse{Bail: true}, nil
		}
		return &pulumirpc.RunResponse{Error: fmt.Sprintf("Program exited with non-zero exit code: %d", exitErr.ExitCode())}, nil
	}
	return &pulumirpc.RunResponse{Error: fmt.Sprintf("Problem executing program (could not run language executor): %v", err)}, nil
}

// RunPlugin starts a policy pack (kind "analyzer") or a Node plugin program.
func (h *host) RunPlugin(req *pulumirpc.RunPluginRequest, server pulumirpc.LanguageRuntime_RunPluginServer) error {
	ctx := server.Context()
	closer, stdout, stderr, err := rpcutil.MakeRunPluginStreams(server, false)
	if err != nil {
		return err
	}
	defer closer.Close()

	node, err := exec.LookPath("node")
	if err != nil {
		return fmt.Errorf("could not find node on the $PATH: %w", err)
	}
	dir := req.GetInfo().GetProgramDirectory()
	isPolicyPack := req.GetKind() == "analyzer"
	module := "@pulumi/pulumi/cmd/run-plugin"
	if isPolicyPack {
		module = "@pulumi/pulumi/cmd/run-policy-pack"
	}
	runPath, err := resolveModule(ctx, node, dir, module, "npm install in "+dir)
	if err != nil {
		return err
	}
	opts, err := parseOptions(req.GetInfo().GetOptions())
	if err != nil {
		return err
	}
	env := append(append([]string{}, req.GetEnv()...), opts.env()...)
	// Upstream's order for plugins: the script, then nodeargs, then the directory and the arguments
	// (a policy pack's directory last).
	args := append([]string{runPath}, opts.nodeArgs...)
	if isPolicyPack {
		args = append(append(args, req.GetArgs()...), dir)
	} else {
		args = append(append(args, dir), req.GetArgs()...)
	}

	var proxy *sdk.PolicyProxy
	if isPolicyPack {
		// The pack learns the stack's configuration from the engine's ConfigureStack call, which the
		// proxy receives before the pack is started.
		proxy, stdout, err = sdk.NewPolicyProxy(ctx, stdout)
		if err != nil {
			return fmt.Errorf("could not start the policy pack proxy: %w", err)
		}
		stackConfig, err := proxy.AwaitConfiguration(ctx)
		if err != nil {
			return fmt.Errorf("could not get the stack's configuration: %w", err)
		}
		if stackConfig != nil {
			pack, err := policyPackEnv(stackConfig)
			if err != nil {
				return err
			}
			env = append(env, pack...)
		}
	}

	runCtx, stop := context.WithCancel(h.runs)
	defer stop()
	context.AfterFunc(ctx, stop)
	cmd := exec.CommandContext(runCtx, node, args...)
	cmd.Dir = req.GetPwd()
	if isPolicyPack {
		cmd.Dir = dir
	}
	cmd.Env = env
	cmd.Stdout, cmd.Stderr = stdout, stderr
	if err := h.start(cmd); err != nil {
		return fmt.Errorf("could not start node: %w", err)
	}
	if proxy != nil {
		// Attach waits for the pack to exit; the host then reaps nothing more.
		err := proxy.Attach(ctx, cmd)
		h.children.Done()
		if err != nil {
			return fmt.Errorf("could not attach the policy pack: %w", err)
		}
		return closer.Close()
	}
	if err := h.wait(cmd); err != nil {
		var exitErr *exec.ExitError
		if errors.As(err, &exitErr) {
			return fmt.Errorf("Program exited with non-zero exit code: %d", exitErr.ExitCode())
		}
		return err
	}
	return closer.Close()
}

func policyPackEnv(c *pulumirpc.AnalyzerStackConfigureRequest) ([]string, error) {
	var env []string
	add := func(k, v string) {
		if v != "" {
			env = append(env, k+"="+v)
		}
	}
	add("PULUMI_NODEJS_ORGANIZATION", c.GetOrganization())
	add("PULUMI_NODEJS_PROJECT", c.GetProject())
	add("PULUMI_NODEJS_STACK", c.GetStack())
	add("PULUMI_NODEJS_DRY_RUN", strconv.FormatBool(c.GetDryRun()))
	if c.GetConfig() != nil {
		b, err := json.Marshal(c.GetConfig())
		if err != nil {
			return nil, fmt.Errorf("could not marshal the stack's configuration: %w", err)
		}
		add("PULUMI_CONFIG", string(b))
	}
	return env, nil
}
