// Command pulumi-language-nodejs is the project's own Node.js language host for the Pulumi CLI.
//
// Upstream's language host lives in its own module, github.com/pulumi/pulumi/sdk/nodejs/cmd/
// pulumi-language-nodejs/v3, which the Go module proxy these machines reach does not serve at any
// version (403 for every pseudo-version of a pkg/v3.2xx tag commit). This host implements the part
// of the LanguageRuntime gRPC service (sdk/v3 proto/go) that the CLI calls to run a program and a
// policy pack, against the public sdk/v3 API. The behaviour it follows was read in upstream's
// sdk/nodejs/cmd/pulumi-language-nodejs/main.go (the release line of the pinned pkg/v3, v3.259-v3.260):
//   - the engine starts the host with the engine address as its only argument (or sends it in
//     Handshake) and reads the port the host prints on stdout; from then on the host checks the
//     engine's health every five minutes (rpcutil.Healthcheck) and exits when the engine is gone;
//   - GetRequiredPackages walks the program directory for node_modules packages whose package.json
//     has `pulumi.resource: true` (packages.go); GetRequiredPlugins is Unimplemented, so that an
//     engine which still asks for it falls back to nothing, as upstream's has since 2024;
//   - a program runs as `node <nodeargs…> <@pulumi/pulumi/cmd/run> --monitor … --engine … --project …
//     --stack … --pwd … [--dry-run] --parallel N <entry point> <args…>`, nodeargs split by shell
//     rules (github.com/google/shlex, as upstream), its configuration in PULUMI_CONFIG (keys as
//     `<namespace>:config:<name>`) and PULUMI_CONFIG_SECRET_KEYS, TypeScript options in
//     PULUMI_NODEJS_TYPESCRIPT and PULUMI_NODEJS_TSCONFIG_PATH; exit code 32 means the program has
//     already shown the user its error (run.go);
//   - a policy pack (RunPlugin with kind "analyzer") runs `@pulumi/pulumi/cmd/run-policy-pack` with
//     the pack's directory last, in that directory, behind sdk.PolicyProxy, which hands it the stack's
//     configuration as PULUMI_NODEJS_* variables;
//   - InstallDependencies and GetProgramDependencies go through the sdk's package-manager package
//     (sdk/v3/nodejs/npm), as upstream's do.
//
// What it leaves out, and why: the synchronous-invoke pipes and the monitor proxy (the Node SDK
// falls back to asynchronous invokes without --sync), debugger attachment, bun, fnm, tracing, codegen
// and packing (no test or admin flow here calls them; they answer Unimplemented).
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"strings"
	"sync"
	"syscall"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/protobuf/types/known/emptypb"

	"github.com/pulumi/pulumi/sdk/v3/go/common/util/rpcutil"
	"github.com/pulumi/pulumi/sdk/v3/nodejs/npm"
	pulumirpc "github.com/pulumi/pulumi/sdk/v3/proto/go"
)

// version is set at link time to the Pulumi release this host is built beside.
var version = "0.0.0-dev"

// engineHealthInterval is how often the host asks the engine whether it is alive: upstream's five minutes.
const engineHealthInterval = 5 * time.Minute

type host struct {
	pulumirpc.UnimplementedLanguageRuntimeServer

	mu            sync.Mutex
	engineAddress string
	// healthInterval is engineHealthInterval, shorter in the host's own tests.
	healthInterval time.Duration
	// life is serve's context; engineGone ends it when the engine fails a health check.
	life       context.Context
	engineGone context.CancelFunc
	// watching is set once a health check of the engine runs, so Handshake does not start a second.
	watching bool
	// runs is the parent of every program and plugin this host starts; Cancel ends them, not the host.
	runs       context.Context
	cancelRuns context.CancelFunc
	// children counts the programs and plugins running, so the host outlives none of them.
	children sync.WaitGroup
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
	var engineAddress string
	if args := flag.Args(); len(args) > 0 {
		engineAddress = args[0]
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	err := serve(ctx, engineAddress, engineHealthInterval, func(port int) { fmt.Printf("%d\n", port) })
	if err != nil {
		fmt.Fprintf(os.Stderr, "pulumi-language-nodejs: %v\n", err)
		os.Exit(1)
	}
}

// serve runs the LanguageRuntime service until ctx ends, the engine fails a health check, or the
// server stops; announce receives the port (the engine reads it from stdout). It returns once every
// program and plugin it started has ended.
func serve(ctx context.Context, engineAddress string, healthInterval time.Duration, announce func(port int)) error {
	ctx, engineGone := context.WithCancel(ctx)
	defer engineGone()
	runs, cancelRuns := context.WithCancel(ctx)
	defer cancelRuns()
	h := &host{
		engineAddress: engineAddress, healthInterval: healthInterval,
		life: ctx, engineGone: engineGone, runs: runs, cancelRuns: cancelRuns,
	}
	defer h.children.Wait()
	if engineAddress != "" {
		if err := h.watchEngine(engineAddress); err != nil {
			return err
		}
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
		return fmt.Errorf("could not serve: %w", err)
	}
	announce(handle.Port)
	if err := <-handle.Done; err != nil {
		return fmt.Errorf("stopped serving: %w", err)
	}
	return nil
}

// watchEngine starts the engine's health check once; a failed check ends the host, as upstream's
// main does with the address it is started with. (Upstream's Handshake starts a second check whose
// failure cancels a context nothing reads; here a Handshake-only engine is watched the same way.)
func (h *host) watchEngine(address string) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.watching {
		return nil
	}
	if err := rpcutil.Healthcheck(h.life, address, h.healthInterval, h.engineGone); err != nil {
		return fmt.Errorf("could not start the engine health check: %w", err)
	}
	h.watching = true
	return nil
}

func (h *host) Handshake(ctx context.Context, req *pulumirpc.LanguageHandshakeRequest) (*pulumirpc.LanguageHandshakeResponse, error) {
	h.mu.Lock()
	h.engineAddress = req.GetEngineAddress()
	h.mu.Unlock()
	if req.GetEngineAddress() != "" {
		if err := h.watchEngine(req.GetEngineAddress()); err != nil {
			return nil, err
		}
	}
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

// GetProgramDependencies lists the program's packages through its package manager (`pulumi about`).
func (h *host) GetProgramDependencies(
	ctx context.Context, req *pulumirpc.GetProgramDependenciesRequest,
) (*pulumirpc.GetProgramDependenciesResponse, error) {
	opts, err := parseOptions(req.GetInfo().GetOptions())
	if err != nil {
		return nil, err
	}
	manager, err := npm.ResolvePackageManager(opts.packageManager, req.GetInfo().GetProgramDirectory())
	if err != nil {
		return nil, err
	}
	packages, err := manager.ListPackages(ctx, req.GetInfo().GetProgramDirectory(), req.GetTransitiveDependencies())
	if err != nil {
		return nil, fmt.Errorf("could not list the program's packages: %w", err)
	}
	out := make([]*pulumirpc.DependencyInfo, 0, len(packages))
	for _, p := range packages {
		out = append(out, &pulumirpc.DependencyInfo{Name: p.Name, Version: p.Version})
	}
	return &pulumirpc.GetProgramDependenciesResponse{Dependencies: out}, nil
}

// InstallDependencies installs the program's packages with its package manager (`pulumi install`),
// from the workspace root when the program is in an npm or yarn workspace.
func (h *host) InstallDependencies(
	req *pulumirpc.InstallDependenciesRequest, server pulumirpc.LanguageRuntime_InstallDependenciesServer,
) error {
	closer, stdout, stderr, err := rpcutil.MakeInstallDependenciesStreams(server, req.GetIsTerminal())
	if err != nil {
		return err
	}
	defer closer.Close()
	opts, err := parseOptions(req.GetInfo().GetOptions())
	if err != nil {
		return err
	}
	dir := req.GetInfo().GetProgramDirectory()
	if root, err := npm.FindWorkspaceRoot(dir); err == nil {
		fmt.Fprintf(stdout, "Detected workspace root at %s\n", root)
		dir = root
	} else if !errors.Is(err, npm.ErrNotInWorkspace) {
		return fmt.Errorf("could not look for a workspace root: %w", err)
	}
	fmt.Fprint(stdout, "Installing dependencies...\n\n")
	if _, err := npm.Install(server.Context(), opts.packageManager, dir, opts.production, stdout, stderr); err != nil {
		return fmt.Errorf("installing the program's dependencies in %s: %w", dir, err)
	}
	fmt.Fprint(stdout, "Finished installing dependencies\n\n")
	return closer.Close()
}
