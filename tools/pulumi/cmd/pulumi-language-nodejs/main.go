// Command pulumi-language-nodejs is the project's own Node.js language host for the Pulumi CLI.
//
// Upstream's language host lives in its own module, github.com/pulumi/pulumi/sdk/nodejs/cmd/
// pulumi-language-nodejs/v3, which the Go module proxy these machines reach does not serve at any
// version (403 for every pseudo-version of a pkg/v3.2xx tag commit). This host implements the part
// of the LanguageRuntime gRPC service (sdk/v3 proto/go) that the CLI uses to run a program and a
// policy pack, against the public sdk/v3 API. The protocol facts it follows were read in upstream's
// sdk/nodejs/cmd/pulumi-language-nodejs/main.go at pkg/v3.248.0:
//   - the engine starts the host with the engine address as its only argument (or sends it in
//     Handshake) and reads the port the host prints on stdout;
//   - a program runs as `node <@pulumi/pulumi/cmd/run> --monitor … --engine … --project … --stack …
//     --pwd … [--dry-run] --parallel N <entry point> <args…>`, its configuration in PULUMI_CONFIG
//     (keys as `<namespace>:config:<name>`) and PULUMI_CONFIG_SECRET_KEYS, TypeScript options in
//     PULUMI_NODEJS_TYPESCRIPT and PULUMI_NODEJS_TSCONFIG_PATH; exit code 32 means the program has
//     already shown the user its error;
//   - a policy pack (RunPlugin with kind "analyzer") runs `@pulumi/pulumi/cmd/run-policy-pack` with
//     the pack's directory last, in that directory, behind sdk.PolicyProxy, which hands it the stack's
//     configuration as PULUMI_NODEJS_* variables.
//
// What it leaves out, and why: the synchronous-invoke pipes and the monitor proxy (the Node SDK
// falls back to asynchronous invokes without --sync), debugger attachment, bun, fnm, codegen and
// packing (no test or admin flow here calls them; they answer Unimplemented).
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/protobuf/types/known/emptypb"
	"google.golang.org/protobuf/types/known/structpb"

	sdk "github.com/pulumi/pulumi/sdk/v3"
	"github.com/pulumi/pulumi/sdk/v3/go/common/resource/config"
	"github.com/pulumi/pulumi/sdk/v3/go/common/util/rpcutil"
	pulumirpc "github.com/pulumi/pulumi/sdk/v3/proto/go"
)

// version is set at link time to the Pulumi release this host is built beside.
var version = "0.0.0-dev"

// bailExitCode is the Node SDK's "the user has already been shown an actionable error" exit code.
const bailExitCode = 32

type host struct {
	pulumirpc.UnimplementedLanguageRuntimeServer

	mu            sync.Mutex
	engineAddress string
	// runs is the parent of every program and plugin this host starts; Cancel ends them, not the host.
	runs       context.Context
	cancelRuns context.CancelFunc
}

func main() {
	flag.String("tracing", "", "accepted for compatibility; tracing is not emitted")
	runtime := flag.String("runtime", "nodejs", "the JavaScript runtime; only nodejs is supported")
	showVersion := flag.Bool("version", false, "print the version and exit")
	flag.Parse()
	if *showVersion {
		fmt.Println(version)
		return
	}
	if *runtime != "nodejs" {
		fmt.Fprintf(os.Stderr, "pulumi-language-nodejs: unsupported runtime %q (this build runs nodejs only)\n", *runtime)
		os.Exit(1)
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	runs, cancelRuns := context.WithCancel(ctx)
	defer cancelRuns()
	h := &host{runs: runs, cancelRuns: cancelRuns}
	if args := flag.Args(); len(args) > 0 {
		h.engineAddress = args[0]
	}

	cancelServing := make(chan bool)
	go func() {
		<-ctx.Done()
		close(cancelServing)
	}()
	handle, err := rpcutil.ServeWithOptions(rpcutil.ServeOptions{
		Cancel: cancelServing,
		Init: func(srv *grpc.Server) error {
			pulumirpc.RegisterLanguageRuntimeServer(srv, h)
			return nil
		},
	})
	if err != nil {
		fmt.Fprintf(os.Stderr, "pulumi-language-nodejs: could not serve: %v\n", err)
		os.Exit(1)
	}
	fmt.Printf("%d\n", handle.Port)
	if err := <-handle.Done; err != nil {
		fmt.Fprintf(os.Stderr, "pulumi-language-nodejs: stopped serving: %v\n", err)
		os.Exit(1)
	}
}

func (h *host) Handshake(_ context.Context, req *pulumirpc.LanguageHandshakeRequest) (*pulumirpc.LanguageHandshakeResponse, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.engineAddress = req.GetEngineAddress()
	return &pulumirpc.LanguageHandshakeResponse{}, nil
}

func (h *host) engine() string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.engineAddress
}

func (h *host) GetPluginInfo(context.Context, *emptypb.Empty) (*pulumirpc.PluginInfo, error) {
	return &pulumirpc.PluginInfo{Version: version}, nil
}

// GetRequiredPlugins and GetRequiredPackages answer "none": providers are found on PATH whatever
// version a resource asks for (sdk/go/common/workspace/plugins.go), so the engine need not install
// anything ahead of the run, and with automatic acquisition disabled it could not.
func (h *host) GetRequiredPlugins(context.Context, *pulumirpc.GetRequiredPluginsRequest) (*pulumirpc.GetRequiredPluginsResponse, error) {
	return &pulumirpc.GetRequiredPluginsResponse{}, nil
}

func (h *host) GetRequiredPackages(context.Context, *pulumirpc.GetRequiredPackagesRequest) (*pulumirpc.GetRequiredPackagesResponse, error) {
	return &pulumirpc.GetRequiredPackagesResponse{}, nil
}

func (h *host) GetProgramDependencies(context.Context, *pulumirpc.GetProgramDependenciesRequest) (*pulumirpc.GetProgramDependenciesResponse, error) {
	return &pulumirpc.GetProgramDependenciesResponse{}, nil
}

func (h *host) About(ctx context.Context, _ *pulumirpc.AboutRequest) (*pulumirpc.AboutResponse, error) {
	node, err := exec.LookPath("node")
	if err != nil {
		return nil, errors.New("could not find node on the $PATH")
	}
	out, err := exec.CommandContext(ctx, node, "--version").Output()
	if err != nil {
		return nil, fmt.Errorf("node --version: %w", err)
	}
	return &pulumirpc.AboutResponse{Executable: node, Version: strings.TrimPrefix(strings.TrimSpace(string(out)), "v")}, nil
}

// Cancel interrupts the programs and plugins running; the host keeps serving until the engine ends it.
func (h *host) Cancel(context.Context, *emptypb.Empty) (*emptypb.Empty, error) {
	h.cancelRuns()
	return &emptypb.Empty{}, nil
}

// options are the runtime options of Pulumi.yaml that change how a program starts.
type options struct {
	typescript   bool
	tsconfigPath string
	nodeArgs     []string
}

func parseOptions(raw *structpb.Struct) (options, error) {
	opts := options{typescript: true}
	m := raw.AsMap()
	if v, ok := m["typescript"]; ok {
		b, ok := v.(bool)
		if !ok {
			return opts, fmt.Errorf("runtime option typescript must be a boolean, got %v", v)
		}
		opts.typescript = b
	}
	if v, ok := m["tsconfig"]; ok {
		s, ok := v.(string)
		if !ok {
			return opts, fmt.Errorf("runtime option tsconfig must be a string, got %v", v)
		}
		opts.tsconfigPath = s
	}
	if v, ok := m["nodeargs"]; ok {
		s, ok := v.(string)
		if !ok {
			return opts, fmt.Errorf("runtime option nodeargs must be a string, got %v", v)
		}
		opts.nodeArgs = strings.Fields(s)
	}
	return opts, nil
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
func resolveModule(ctx context.Context, node, dir, module string) (string, error) {
	script := fmt.Sprintf("try { console.log(require.resolve(%q)) } catch (e) { console.error(e.code === 'MODULE_NOT_FOUND' ? 'The Pulumi Node SDK is not installed in %s: run npm ci there.' : e.message); process.exit(1) }", module, dir)
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

func (h *host) Run(ctx context.Context, req *pulumirpc.RunRequest) (*pulumirpc.RunResponse, error) {
	if req.GetAttachDebugger() {
		return &pulumirpc.RunResponse{Error: "this language host does not attach debuggers"}, nil
	}
	node, err := exec.LookPath("node")
	if err != nil {
		return &pulumirpc.RunResponse{Error: "could not find node on the $PATH"}, nil
	}
	dir := req.GetInfo().GetProgramDirectory()
	runPath, err := resolveModule(ctx, node, dir, "@pulumi/pulumi/cmd/run")
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

	err = cmd.Run()
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
	return &pulumirpc.RunResponse{Error: fmt.Sprintf("could not run node: %v", err)}, nil
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
		return errors.New("could not find node on the $PATH")
	}
	dir := req.GetInfo().GetProgramDirectory()
	isPolicyPack := req.GetKind() == "analyzer"
	module := "@pulumi/pulumi/cmd/run-plugin"
	if isPolicyPack {
		module = "@pulumi/pulumi/cmd/run-policy-pack"
	}
	runPath, err := resolveModule(ctx, node, dir, module)
	if err != nil {
		return err
	}
	opts, err := parseOptions(req.GetInfo().GetOptions())
	if err != nil {
		return err
	}
	env := append(append([]string{}, req.GetEnv()...), opts.env()...)
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
			env = append(env, policyPackEnv(stackConfig)...)
		}
	}

	cmd := exec.CommandContext(ctx, node, args...)
	cmd.Dir = req.GetPwd()
	if isPolicyPack {
		cmd.Dir = dir
	}
	cmd.Env = env
	cmd.Stdout, cmd.Stderr = stdout, stderr
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("could not start node: %w", err)
	}
	if proxy != nil {
		if err := proxy.Attach(ctx, cmd); err != nil {
			return fmt.Errorf("could not attach the policy pack: %w", err)
		}
		return closer.Close()
	}
	if err := cmd.Wait(); err != nil {
		var exitErr *exec.ExitError
		if errors.As(err, &exitErr) {
			return fmt.Errorf("Program exited with non-zero exit code: %d", exitErr.ExitCode())
		}
		return err
	}
	return closer.Close()
}

func policyPackEnv(c *pulumirpc.AnalyzerStackConfigureRequest) []string {
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
		if b, err := json.Marshal(c.GetConfig()); err == nil {
			add("PULUMI_CONFIG", string(b))
		}
	}
	return env
}

// InstallDependencies runs `npm ci` (or `npm install` without a lockfile) in the program's
// directory, for `pulumi install`.
func (h *host) InstallDependencies(req *pulumirpc.InstallDependenciesRequest, server pulumirpc.LanguageRuntime_InstallDependenciesServer) error {
	dir := req.GetInfo().GetProgramDirectory()
	verb := "install"
	if _, err := os.Stat(filepath.Join(dir, "package-lock.json")); err == nil {
		verb = "ci"
	}
	cmd := exec.CommandContext(server.Context(), "npm", verb, "--no-audit", "--no-fund")
	cmd.Dir = dir
	out := &streamWriter{send: func(b []byte) error {
		return server.Send(&pulumirpc.InstallDependenciesResponse{Stdout: b})
	}}
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("npm %s in %s: %w", verb, dir, err)
	}
	return nil
}

type streamWriter struct{ send func([]byte) error }

func (w *streamWriter) Write(p []byte) (int, error) {
	if err := w.send(append([]byte{}, p...)); err != nil {
		return 0, err
	}
	return len(p), nil
}
