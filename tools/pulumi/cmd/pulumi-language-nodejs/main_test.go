// Tests of the language host against upstream's behaviour for each RPC the CLI calls
// (sdk/go/common/resource/plugin/langruntime_plugin.go: Handshake, GetPluginInfo,
// GetRequiredPackages and its GetRequiredPlugins fallback, Run, RunPlugin, Cancel, About,
// GetProgramDependencies, InstallDependencies) and its engine health check. The host is served over
// real gRPC, as the CLI reaches it; programs are node scripts standing in for @pulumi/pulumi's
// cmd/run and cmd/run-plugin, so the arguments and environment node receives are read back exactly.
// The expectations are upstream's (sdk/nodejs/cmd/pulumi-language-nodejs/main.go, read at the
// pinned release line), cited at each test. Needs node and npm on PATH, as the host itself does.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/emptypb"
	"google.golang.org/protobuf/types/known/structpb"

	pulumirpc "github.com/pulumi/pulumi/sdk/v3/proto/go"
)

// started is a host served on a free port, with a client and the serve call's result.
type started struct {
	client pulumirpc.LanguageRuntimeClient
	stop   context.CancelFunc
	done   chan error
}

func startHost(t *testing.T, engine string, interval time.Duration) *started {
	t.Helper()
	ctx, stop := context.WithCancel(context.Background())
	ports := make(chan int, 1)
	done := make(chan error, 1)
	go func() { done <- serve(ctx, engine, interval, func(port int) { ports <- port }) }()
	var port int
	select {
	case port = <-ports:
	case err := <-done:
		t.Fatalf("the host did not serve: %v", err)
	}
	conn, err := grpc.NewClient(net.JoinHostPort("127.0.0.1", strconv.Itoa(port)), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	s := &started{client: pulumirpc.NewLanguageRuntimeClient(conn), stop: stop, done: done}
	t.Cleanup(func() {
		conn.Close()
		stop()
		select {
		case <-done:
		case <-time.After(30 * time.Second):
			t.Error("the host did not stop within 30 s of its context ending")
		}
	})
	return s
}

// fakeEngine serves the gRPC health service, as the engine does for its plugins' health checks.
func fakeEngine(t *testing.T) (addr string, stop func()) {
	t.Helper()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := grpc.NewServer()
	healthpb.RegisterHealthServer(srv, health.NewServer())
	go func() { _ = srv.Serve(lis) }()
	return lis.Addr().String(), srv.Stop
}

func writeFile(t *testing.T, path, text string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

func writeJSON(t *testing.T, path string, value any) {
	t.Helper()
	b, err := json.Marshal(value)
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, path, string(b))
}

// recordingScript is a stand-in for an SDK entry point: it writes the arguments after the script
// path, its working directory and the PULUMI_* environment to RECORD, then exits with EXIT_CODE
// (or waits for SIGINT when EXIT_CODE is "wait", and records that it got it).
const recordingScript = `
const fs = require("fs");
const record = (extra) => fs.writeFileSync(process.env.RECORD, JSON.stringify({
	argv: process.argv.slice(2), execArgv: process.execArgv, cwd: process.cwd(),
	env: Object.fromEntries(Object.entries(process.env).filter(([k]) => k.startsWith("PULUMI_"))), ...extra }));
if (process.env.EXIT_CODE === "wait") {
	process.on("SIGINT", () => { record({ interrupted: true }); process.exit(0); });
	record({ waiting: true });
	setInterval(() => {}, 1000);
} else {
	record({});
	process.exit(Number(process.env.EXIT_CODE || "0"));
}
`

// sdkProgram makes a program directory whose node_modules/@pulumi/pulumi has the recording script
// at cmd/run, cmd/run-plugin and cmd/run-policy-pack.
func sdkProgram(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	sdk := filepath.Join(dir, "node_modules", "@pulumi", "pulumi")
	writeJSON(t, filepath.Join(sdk, "package.json"), map[string]any{"name": "@pulumi/pulumi", "version": "3.260.0"})
	for _, entry := range []string{"run", "run-plugin", "run-policy-pack"} {
		writeFile(t, filepath.Join(sdk, "cmd", entry, "index.js"), recordingScript)
	}
	return dir
}

type record struct {
	Argv        []string          `json:"argv"`
	ExecArgv    []string          `json:"execArgv"`
	Cwd         string            `json:"cwd"`
	Env         map[string]string `json:"env"`
	Interrupted bool              `json:"interrupted"`
	Waiting     bool              `json:"waiting"`
}

func readRecord(t *testing.T, path string) record {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var r record
	if err := json.Unmarshal(raw, &r); err != nil {
		t.Fatal(err)
	}
	return r
}

// waitForProgram waits (at most 30 s) until the recording script says it is waiting for SIGINT.
func waitForProgram(t *testing.T, recordPath string) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		if raw, err := os.ReadFile(recordPath); err == nil && strings.Contains(string(raw), `"waiting":true`) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatal("the program did not start within 30 s")
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func runtimeOptions(t *testing.T, m map[string]any) *structpb.Struct {
	t.Helper()
	s, err := structpb.NewStruct(m)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// withEnv sets variables the host passes on to node (the host's own environment, as the engine's).
func withEnv(t *testing.T, kv ...string) {
	for i := 0; i < len(kv); i += 2 {
		t.Setenv(kv[i], kv[i+1])
	}
}

func TestGetPluginInfoReportsTheBuildVersion(t *testing.T) {
	h := startHost(t, "", time.Minute)
	info, err := h.client.GetPluginInfo(context.Background(), &emptypb.Empty{})
	if err != nil || info.GetVersion() != version {
		t.Fatalf("GetPluginInfo = %v, %v; want version %q", info, err, version)
	}
}

// Upstream answers GetRequiredPlugins with Unimplemented (main.go, since pulumi/pulumi#17910), so the
// engine's fallback reports no plugins from it (langruntime_plugin.go getRequiredPlugins).
func TestGetRequiredPluginsIsUnimplemented(t *testing.T) {
	h := startHost(t, "", time.Minute)
	_, err := h.client.GetRequiredPlugins(context.Background(), &pulumirpc.GetRequiredPluginsRequest{
		Info: &pulumirpc.ProgramInfo{ProgramDirectory: t.TempDir(), EntryPoint: "."},
	})
	if status.Code(err) != codes.Unimplemented {
		t.Fatalf("GetRequiredPlugins error = %v; want code Unimplemented", err)
	}
}

type dependency struct{ Name, Kind, Version, Server, Parameterization, Extension string }

func dependencies(packages []*pulumirpc.PackageDependency) []dependency {
	out := make([]dependency, 0, len(packages))
	param := func(p *pulumirpc.PackageParameterization) string {
		if p == nil {
			return ""
		}
		return p.GetName() + "@" + p.GetVersion() + ":" + string(p.GetValue())
	}
	for _, p := range packages {
		out = append(out, dependency{p.GetName(), p.GetKind(), p.GetVersion(), p.GetServer(), param(p.GetParameterization()), param(p.GetExtension())})
	}
	return sortedDependencies(out)
}

// sortedDependencies orders deps by name and version, so two lists compare whatever order each was made in.
func sortedDependencies(deps []dependency) []dependency {
	sort.Slice(deps, func(i, j int) bool { return deps[i].Name+deps[i].Version < deps[j].Name+deps[j].Version })
	return deps
}

// Upstream's getPackagesFromDir/getPackageInfo: every package.json below a node_modules directory
// of the program directory with pulumi.resource true is a resource package; its plugin name is
// pulumi.name, else the package name without @pulumi/; its version pulumi.version, else the
// package's, prefixed with v; its server and parameterizations as declared. Nested node_modules
// count; a package.json outside node_modules does not; policy packs are not entered; symlink cycles
// end; an invalid package is left out (logged) while the others are reported.
func TestGetRequiredPackagesWalksNodeModulesAsUpstream(t *testing.T) {
	dir := t.TempDir()
	nm := filepath.Join(dir, "node_modules")
	// package.json files outside node_modules are not dependencies, whatever they declare.
	writeJSON(t, filepath.Join(dir, "package.json"), map[string]any{"name": "@pulumi/program", "version": "1.0.0", "pulumi": map[string]any{"resource": true}})
	writeJSON(t, filepath.Join(dir, "vendor", "package.json"), map[string]any{"name": "@pulumi/vendored", "version": "1.0.0", "pulumi": map[string]any{"resource": true}})
	writeJSON(t, filepath.Join(nm, "@pulumi", "kubernetes", "package.json"),
		map[string]any{"name": "@pulumi/kubernetes", "version": "4.25.0", "pulumi": map[string]any{"resource": true}})
	writeJSON(t, filepath.Join(nm, "@pulumi", "pulumi", "package.json"), map[string]any{"name": "@pulumi/pulumi", "version": "3.260.0"})
	writeJSON(t, filepath.Join(nm, "@pulumi", "policy", "package.json"),
		map[string]any{"name": "@pulumi/policy", "version": "1.21.0", "pulumi": map[string]any{"resource": false}})
	writeJSON(t, filepath.Join(nm, "third-party", "package.json"), map[string]any{
		"name": "third-party", "version": "1.0.0",
		"pulumi": map[string]any{"resource": true, "name": "thirdparty", "version": "2.0.0", "server": "https://plugins.example.com/"},
	})
	writeJSON(t, filepath.Join(nm, "@acme", "terraform", "package.json"), map[string]any{
		"name": "@acme/terraform", "version": "0.1.0",
		"pulumi": map[string]any{
			"resource": true, "name": "terraform-provider", "version": "v0.12.0",
			"parameterization": map[string]any{"name": "acme", "version": "0.1.0", "value": "e30="}, // base64 of {}
		},
	})
	writeJSON(t, filepath.Join(nm, "unnamed-third-party", "package.json"),
		map[string]any{"name": "unnamed-third-party", "version": "1.0.0", "pulumi": map[string]any{"resource": true}})
	writeJSON(t, filepath.Join(nm, "wrapper", "node_modules", "@pulumi", "tls", "package.json"),
		map[string]any{"name": "@pulumi/tls", "version": "5.6.1", "pulumi": map[string]any{"resource": true}})
	// A policy pack's own dependencies are not the program's.
	writeFile(t, filepath.Join(dir, "policy", "PulumiPolicy.yaml"), "runtime: nodejs\n")
	writeJSON(t, filepath.Join(dir, "policy", "node_modules", "@pulumi", "aws", "package.json"),
		map[string]any{"name": "@pulumi/aws", "version": "7.48.0", "pulumi": map[string]any{"resource": true}})
	// A cycle through a symlink, and a package reached only through a link.
	if err := os.Symlink(nm, filepath.Join(nm, "wrapper", "loop")); err != nil {
		t.Fatal(err)
	}
	linked := t.TempDir()
	writeJSON(t, filepath.Join(linked, "package.json"),
		map[string]any{"name": "@pulumi/random", "version": "4.18.0", "pulumi": map[string]any{"resource": true}})
	if err := os.Symlink(linked, filepath.Join(nm, "@pulumi", "random")); err != nil {
		t.Fatal(err)
	}

	h := startHost(t, "", time.Minute)
	resp, err := h.client.GetRequiredPackages(context.Background(), &pulumirpc.GetRequiredPackagesRequest{
		Info: &pulumirpc.ProgramInfo{ProgramDirectory: dir, EntryPoint: "."},
	})
	if err != nil {
		t.Fatal(err)
	}
	want := []dependency{
		{"kubernetes", "resource", "v4.25.0", "", "", ""},
		{"random", "resource", "v4.18.0", "", "", ""},
		{"terraform-provider", "resource", "v0.12.0", "", "acme@0.1.0:{}", ""},
		{"thirdparty", "resource", "v2.0.0", "https://plugins.example.com/", "", ""},
		{"tls", "resource", "v5.6.1", "", "", ""},
	}
	if got := dependencies(resp.GetPackages()); !reflect.DeepEqual(got, want) {
		t.Fatalf("GetRequiredPackages =\n%v\nwant\n%v", got, want)
	}
}

// The program's own node_modules, as `npm ci` installed it: the packages the engine will look for
// are exactly the lockfile's packages that carry a Pulumi resource plugin, at the lockfile's
// versions. The oracle is npm's lockfile, read independently of the walk (which reads package.json
// files): a version the walk reported differently would name the plugin version the engine asks for.
func TestGetRequiredPackagesOfTheRepositoryProgramMatchTheLockfile(t *testing.T) {
	root, err := filepath.Abs(filepath.Join("..", "..", "..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "node_modules", "@pulumi", "kubernetes")); err != nil {
		t.Skip("the repository's node_modules is not installed (npm ci)")
	}
	raw, err := os.ReadFile(filepath.Join(root, "package-lock.json"))
	if err != nil {
		t.Fatal(err)
	}
	var lock struct {
		Packages map[string]struct{ Version string } `json:"packages"`
	}
	if err := json.Unmarshal(raw, &lock); err != nil {
		t.Fatal(err)
	}
	// Every @pulumi package the lockfile installs at the top of node_modules is a provider's SDK
	// but the two SDKs of the engine itself: devDependencies included (@pulumi/aws-native, whose
	// types the tag rules are generated from), since upstream's walk reads what is installed, not
	// package.json's sections. A name list here went stale when that package was added.
	var want []dependency
	for key, entry := range lock.Packages {
		name, ok := strings.CutPrefix(key, "node_modules/@pulumi/")
		if !ok || strings.Contains(name, "/") || name == "pulumi" || name == "policy" {
			continue
		}
		want = append(want, dependency{name, "resource", "v" + entry.Version, "", "", ""})
	}
	want = sortedDependencies(want)
	h := startHost(t, "", time.Minute)
	resp, err := h.client.GetRequiredPackages(context.Background(), &pulumirpc.GetRequiredPackagesRequest{
		Info: &pulumirpc.ProgramInfo{RootDirectory: root, ProgramDirectory: root, EntryPoint: "."},
	})
	if err != nil {
		t.Fatal(err)
	}
	if got := dependencies(resp.GetPackages()); !reflect.DeepEqual(got, want) {
		t.Fatalf("GetRequiredPackages of the repository =\n%v\nwant (package-lock.json)\n%v", got, want)
	}
}

// Upstream splits nodeargs with github.com/google/shlex: words as a POSIX shell splits them.
func TestNodeargsAreSplitAsAShellSplitsWords(t *testing.T) {
	opts, err := parseOptions(runtimeOptions(t, map[string]any{
		"nodeargs": `--max-old-space-size=4096 --require "./set up.js"  --title='a b' --x=c\ d`,
	}))
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"--max-old-space-size=4096", "--require", "./set up.js", "--title=a b", "--x=c d"}
	if !reflect.DeepEqual(opts.nodeArgs, want) {
		t.Fatalf("nodeargs = %q; want %q", opts.nodeArgs, want)
	}
	for option, value := range map[string]any{"nodeargs": 3.0, "typescript": "yes", "tsconfig": true, "packagemanager": "maven"} {
		if _, err := parseOptions(runtimeOptions(t, map[string]any{option: value})); err == nil || !strings.Contains(err.Error(), option) {
			t.Errorf("runtime option %s=%v: error %v; want one naming the option", option, value, err)
		}
	}
}

// Upstream's Run: node <nodeargs> <cmd/run> --monitor … --engine … --organization … --project …
// --root-directory … --stack … --pwd … [--dry-run] --parallel N <entry point> <args>, config keys as
// <namespace>:config:<name>, exit code 32 a bail, any other a "Program exited with non-zero exit
// code" error.
func TestRunStartsNodeAsUpstream(t *testing.T) {
	dir := sdkProgram(t)
	recordPath := filepath.Join(t.TempDir(), "record.json")
	withEnv(t, "RECORD", recordPath, "EXIT_CODE", "0")
	engine, stopEngine := fakeEngine(t)
	defer stopEngine()
	h := startHost(t, engine, time.Minute)
	req := &pulumirpc.RunRequest{
		MonitorAddress: "127.0.0.1:1", Organization: "org", Project: "proj", Stack: "dev", DryRun: true, Parallel: 8,
		Config:           map[string]string{"proj:region": "eu", "kubernetes:context": "c"},
		ConfigSecretKeys: []string{"proj:secret"},
		Args:             []string{"extra"},
		Info: &pulumirpc.ProgramInfo{
			RootDirectory: dir, ProgramDirectory: dir, EntryPoint: "main.ts",
			Options: runtimeOptions(t, map[string]any{"nodeargs": `--title "x y"`, "tsconfig": "tsconfig.pulumi.json"}),
		},
	}
	resp, err := h.client.Run(context.Background(), req)
	if err != nil || resp.GetError() != "" || resp.GetBail() {
		t.Fatalf("Run = %v, %v", resp, err)
	}
	got := readRecord(t, recordPath)
	wantArgv := []string{
		"--monitor", "127.0.0.1:1", "--engine", engine, "--organization", "org", "--project", "proj",
		"--root-directory", dir, "--stack", "dev", "--pwd", dir, "--dry-run", "--parallel", "8", "main.ts", "extra",
	}
	if !reflect.DeepEqual(got.Argv, wantArgv) || !reflect.DeepEqual(got.ExecArgv, []string{"--title", "x y"}) {
		t.Fatalf("node ran with execArgv %q argv %q; want %q and %q", got.ExecArgv, got.Argv, []string{"--title", "x y"}, wantArgv)
	}
	var cfg map[string]string
	if err := json.Unmarshal([]byte(got.Env["PULUMI_CONFIG"]), &cfg); err != nil {
		t.Fatal(err)
	}
	wantEnv := map[string]string{"proj:config:region": "eu", "kubernetes:config:context": "c"}
	if !reflect.DeepEqual(cfg, wantEnv) || got.Env["PULUMI_CONFIG_SECRET_KEYS"] != `["proj:secret"]` ||
		got.Env["PULUMI_NODEJS_TYPESCRIPT"] != "true" || got.Env["PULUMI_NODEJS_TSCONFIG_PATH"] != "tsconfig.pulumi.json" {
		t.Fatalf("node's PULUMI_* environment = %v", got.Env)
	}

	for code, want := range map[string]*pulumirpc.RunResponse{
		"32": {Bail: true},
		"3":  {Error: "Program exited with non-zero exit code: 3"},
	} {
		t.Setenv("EXIT_CODE", code)
		resp, err := h.client.Run(context.Background(), req)
		if err != nil || resp.GetBail() != want.GetBail() || resp.GetError() != want.GetError() {
			t.Errorf("exit %s: Run = %v, %v; want %v", code, resp, err, want)
		}
	}

	req.Info.ProgramDirectory = t.TempDir()
	resp, err = h.client.Run(context.Background(), req)
	if err != nil || !strings.Contains(resp.GetError(), "It looks like the Pulumi SDK has not been installed. Have you run pulumi install?") {
		t.Fatalf("Run without the SDK = %v, %v; want upstream's missing-SDK message", resp, err)
	}
}

// Upstream's RunPlugin for a plugin program: node <cmd/run-plugin> <nodeargs> <directory> <args>,
// in the request's pwd, with the request's environment; its output comes back on the stream.
func TestRunPluginStartsNodeAsUpstream(t *testing.T) {
	dir := sdkProgram(t)
	recordPath := filepath.Join(t.TempDir(), "record.json")
	pwd := t.TempDir()
	h := startHost(t, "", time.Minute)
	stream, err := h.client.RunPlugin(context.Background(), &pulumirpc.RunPluginRequest{
		Pwd:  pwd,
		Args: []string{"serve"},
		Env:  []string{"RECORD=" + recordPath, "EXIT_CODE=0", "PULUMI_FROM_ENGINE=yes"},
		Kind: "resource",
		Info: &pulumirpc.ProgramInfo{ProgramDirectory: dir, EntryPoint: ".", Options: runtimeOptions(t, map[string]any{"nodeargs": "--a 'b c'"})},
	})
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := stream.Recv(); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			t.Fatal(err)
		}
	}
	got := readRecord(t, recordPath)
	if want := []string{"--a", "b c", dir, "serve"}; !reflect.DeepEqual(got.Argv, want) || got.Cwd != pwd || got.Env["PULUMI_FROM_ENGINE"] != "yes" {
		t.Fatalf("plugin ran with argv %q in %s env %v; want %q in %s", got.Argv, got.Cwd, got.Env, want, pwd)
	}
}

// Cancel interrupts the running program (SIGINT, as upstream's cmd.Cancel) and Run returns.
func TestCancelInterruptsTheRunningProgram(t *testing.T) {
	dir := sdkProgram(t)
	recordPath := filepath.Join(t.TempDir(), "record.json")
	withEnv(t, "RECORD", recordPath, "EXIT_CODE", "wait")
	h := startHost(t, "", time.Minute)
	result := make(chan error, 1)
	go func() {
		_, err := h.client.Run(context.Background(), &pulumirpc.RunRequest{Info: &pulumirpc.ProgramInfo{ProgramDirectory: dir, EntryPoint: "."}})
		result <- err
	}()
	waitForProgram(t, recordPath)
	if _, err := h.client.Cancel(context.Background(), &emptypb.Empty{}); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-result:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("Run did not return within 30 s of Cancel")
	}
	if !readRecord(t, recordPath).Interrupted {
		t.Fatal("the program did not receive SIGINT")
	}
}

// Upstream's main starts rpcutil.Healthcheck on the engine's address and stops serving when a check
// fails; here the host also interrupts the program it runs and waits for it, so nothing outlives it.
func TestTheHostExitsWhenTheEngineIsGone(t *testing.T) {
	dir := sdkProgram(t)
	recordPath := filepath.Join(t.TempDir(), "record.json")
	withEnv(t, "RECORD", recordPath, "EXIT_CODE", "wait")
	engine, stopEngine := fakeEngine(t)
	h := startHost(t, engine, 200*time.Millisecond)
	go func() {
		_, _ = h.client.Run(context.Background(), &pulumirpc.RunRequest{Info: &pulumirpc.ProgramInfo{ProgramDirectory: dir, EntryPoint: "."}})
	}()
	waitForProgram(t, recordPath)
	// Alive while the engine answers: several check intervals pass.
	select {
	case err := <-h.done:
		t.Fatalf("the host stopped while the engine was alive: %v", err)
	case <-time.After(time.Second):
	}
	stopEngine()
	select {
	case err := <-h.done:
		h.done <- err // for the cleanup
		if err != nil {
			t.Fatalf("serve returned %v; want a clean stop", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the host still served 30 s after the engine went away")
	}
	if !readRecord(t, recordPath).Interrupted {
		t.Fatal("the host stopped without interrupting its program")
	}
}

func TestHandshakeAnswersAndWatchesTheEngine(t *testing.T) {
	engine, stopEngine := fakeEngine(t)
	h := startHost(t, "", 200*time.Millisecond)
	if _, err := h.client.Handshake(context.Background(), &pulumirpc.LanguageHandshakeRequest{EngineAddress: engine}); err != nil {
		t.Fatal(err)
	}
	stopEngine()
	select {
	case err := <-h.done:
		h.done <- err
	case <-time.After(30 * time.Second):
		t.Fatal("the host still served 30 s after the engine it was handed in Handshake went away")
	}
}

func TestAboutNamesNode(t *testing.T) {
	node, err := exec.LookPath("node")
	if err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(node, "--version").Output()
	if err != nil {
		t.Fatal(err)
	}
	h := startHost(t, "", time.Minute)
	about, err := h.client.About(context.Background(), &pulumirpc.AboutRequest{})
	if err != nil || about.GetExecutable() != node || "v"+about.GetVersion() != strings.TrimSpace(string(out)) {
		t.Fatalf("About = %v, %v; want %s %s", about, err, node, strings.TrimSpace(string(out)))
	}
}

// GetProgramDependencies and InstallDependencies go through the package manager, as upstream's: a
// program with one local dependency is installed by npm (no registry needed) and then listed.
func TestInstallAndListDependenciesThroughNpm(t *testing.T) {
	dir := t.TempDir()
	writeJSON(t, filepath.Join(dir, "dep", "package.json"), map[string]any{"name": "dep", "version": "1.2.3"})
	writeJSON(t, filepath.Join(dir, "package.json"), map[string]any{"name": "program", "version": "0.0.1", "dependencies": map[string]string{"dep": "file:./dep"}})
	t.Setenv("npm_config_cache", filepath.Join(t.TempDir(), "npm-cache"))
	h := startHost(t, "", time.Minute)
	info := &pulumirpc.ProgramInfo{RootDirectory: dir, ProgramDirectory: dir, EntryPoint: "."}
	stream, err := h.client.InstallDependencies(context.Background(), &pulumirpc.InstallDependenciesRequest{Info: info})
	if err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	for {
		resp, err := stream.Recv()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("InstallDependencies: %v\n%s", err, out.String())
		}
		out.Write(resp.GetStdout())
		out.Write(resp.GetStderr())
	}
	if !strings.Contains(out.String(), "Finished installing dependencies") {
		t.Fatalf("InstallDependencies output:\n%s", out.String())
	}
	deps, err := h.client.GetProgramDependencies(context.Background(), &pulumirpc.GetProgramDependenciesRequest{Info: info})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, d := range deps.GetDependencies() {
		got = append(got, d.GetName()+"@"+d.GetVersion())
	}
	if !reflect.DeepEqual(got, []string{"dep@1.2.3"}) {
		t.Fatalf("GetProgramDependencies = %v; want [dep@1.2.3]", got)
	}
}
