package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/blang/semver"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/pulumi/pulumi/sdk/v3/go/common/resource/plugin"
	"github.com/pulumi/pulumi/sdk/v3/go/common/util/logging"
	"github.com/pulumi/pulumi/sdk/v3/go/common/workspace"
	pulumirpc "github.com/pulumi/pulumi/sdk/v3/proto/go"
)

// GetRequiredPlugins is Unimplemented, as upstream's has been since GetRequiredPackages replaced it
// (pulumi/pulumi#17910): the engine asks GetRequiredPackages and falls back to this method only for
// hosts that lack the newer one (sdk/go/common/resource/plugin/langruntime_plugin.go).
func (h *host) GetRequiredPlugins(context.Context, *pulumirpc.GetRequiredPluginsRequest) (*pulumirpc.GetRequiredPluginsResponse, error) {
	return nil, status.Error(codes.Unimplemented, "method GetRequiredPlugins not implemented")
}

// GetRequiredPackages reports the resource plugins the program's node_modules declare, as upstream's
// host does: every package.json under a node_modules directory below the program directory whose
// `pulumi.resource` is true names a plugin (`pulumi.name`, else the package name without its
// @pulumi/ scope), its version (`pulumi.version`, else the package's, with a leading v), its download
// server and parameterization. Problems reading the tree are logged, never returned: the engine
// treats the answer as advisory, and what was found is still reported. Copies of @pulumi/pulumi
// whose versions are incompatible are reported on stderr.
func (h *host) GetRequiredPackages(_ context.Context, req *pulumirpc.GetRequiredPackagesRequest) (*pulumirpc.GetRequiredPackagesResponse, error) {
	walk := &packageWalk{visited: map[string]bool{}, sdks: map[string]semver.Version{}}
	packages, err := walk.dir(req.GetInfo().GetProgramDirectory(), false)
	if err != nil {
		logging.V(3).Infof("one or more errors while discovering plugins: %s", err)
	}
	if problem := walk.incompatibleSDKs(); problem != "" {
		fmt.Fprint(os.Stderr, problem)
	}
	return &pulumirpc.GetRequiredPackagesResponse{Packages: packages}, nil
}

type packageWalk struct {
	// visited holds every directory read, by absolute resolved path: symlink cycles end there.
	visited map[string]bool
	// sdks maps each @pulumi/pulumi package.json found to its version.
	sdks map[string]semver.Version
}

// dir walks one directory; inNodeModules says whether a directory named node_modules is above it.
// Policy packs (a PulumiPolicy.yaml) are not entered: their plugins are not the program's.
func (w *packageWalk) dir(dir string, inNodeModules bool) ([]*pulumirpc.PackageDependency, error) {
	dir, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("resolving %s: %w", dir, err)
	}
	if w.visited[dir] {
		return nil, nil
	}
	w.visited[dir] = true
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", dir, err)
	}
	below := inNodeModules || filepath.Base(dir) == "node_modules"
	var found []*pulumirpc.PackageDependency
	var problems []error
	for _, entry := range entries {
		path := filepath.Join(dir, entry.Name())
		isDir := entry.IsDir()
		if entry.Type()&fs.ModeSymlink != 0 {
			resolved, err := filepath.EvalSymlinks(path)
			if err != nil {
				problems = append(problems, fmt.Errorf("resolving link %s: %w", path, err))
				continue
			}
			info, err := os.Stat(resolved)
			if err != nil {
				problems = append(problems, err)
				continue
			}
			path, isDir = resolved, info.IsDir()
		}
		switch {
		case isDir:
			pack, err := workspace.DetectPolicyPackPathAt(path)
			if err != nil {
				problems = append(problems, err)
				continue
			}
			if pack != "" {
				continue
			}
			more, err := w.dir(path, below)
			if err != nil {
				problems = append(problems, err)
			}
			found = append(found, more...)
		case inNodeModules && entry.Name() == "package.json":
			dep, err := w.packageJSON(path)
			if err != nil {
				problems = append(problems, fmt.Errorf("%s: %w", path, err))
			} else if dep != nil {
				found = append(found, dep)
			}
		}
	}
	return found, errors.Join(problems...)
}

// manifest is what the walk reads of a package.json.
type manifest struct {
	Name    string                  `json:"name"`
	Version string                  `json:"version"`
	Pulumi  plugin.PulumiPluginJSON `json:"pulumi"`
}

func (w *packageWalk) packageJSON(path string) (*pulumirpc.PackageDependency, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var m manifest
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, err
	}
	if m.Name == "@pulumi/pulumi" {
		v, err := semver.Parse(m.Version)
		if err != nil {
			return nil, fmt.Errorf("could not understand version %s of @pulumi/pulumi: %w", m.Version, err)
		}
		w.sdks[path] = v
	}
	if !m.Pulumi.Resource {
		return nil, nil
	}
	name, err := pluginName(m)
	if err != nil {
		return nil, err
	}
	version := m.Pulumi.Version
	if version == "" {
		version = m.Version
	}
	if version == "" {
		return nil, errors.New(`missing expected "version" property`)
	}
	if !strings.HasPrefix(version, "v") {
		version = "v" + version
	}
	return &pulumirpc.PackageDependency{
		Name:             name,
		Kind:             "resource",
		Version:          version,
		Server:           m.Pulumi.Server,
		Parameterization: parameterization(m.Pulumi.Parameterization),
		Extension:        parameterization(m.Pulumi.ExtensionParameterization),
	}, nil
}

// pluginName is `pulumi.name`, else an @pulumi/ package's name without its scope; a third-party
// package must name its plugin.
func pluginName(m manifest) (string, error) {
	if m.Pulumi.Name != "" {
		return m.Pulumi.Name, nil
	}
	if m.Name == "" {
		return "", errors.New(`missing expected "name" property`)
	}
	if rest, ok := strings.CutPrefix(m.Name, "@pulumi/"); ok {
		return rest, nil
	}
	return "", fmt.Errorf(`missing property "name" for the third-party plugin '%v' inside package.json under the "pulumi" section`, m.Name)
}

func parameterization(p *plugin.PulumiParameterizationJSON) *pulumirpc.PackageParameterization {
	if p == nil {
		return nil
	}
	return &pulumirpc.PackageParameterization{Name: p.Name, Version: p.Version, Value: p.Value}
}

// incompatibleSDKs names two copies of @pulumi/pulumi whose versions do not go together (upstream's
// rule: above 2.x the majors must match; before 1.0 major and minor; 0.17 and 1.x go together), or "".
func (w *packageWalk) incompatibleSDKs() string {
	paths := make([]string, 0, len(w.sdks))
	for p := range w.sdks {
		paths = append(paths, p)
	}
	if len(paths) < 2 {
		return ""
	}
	first := paths[0]
	for _, other := range paths[1:] {
		if why := incompatible(w.sdks[first], w.sdks[other]); why != "" {
			return fmt.Sprintf("Found incompatible versions of @pulumi/pulumi. %s\n  Version %s referenced at %s\n  Version %s referenced at %s\n",
				why, w.sdks[first], first, w.sdks[other], other)
		}
	}
	return ""
}

func incompatible(a, b semver.Version) string {
	switch {
	case a.Major == 0 && b.Major == 0:
		if a.Minor != b.Minor {
			return "Differing major or minor versions are not supported."
		}
	case a.Major >= 1 && a.Major <= 2 && b.Major >= 1 && b.Major <= 2:
	case a.Major > 2 || b.Major > 2:
		if a.Major != b.Major {
			return "Differing major versions are not supported."
		}
	case (a.Major == 1 && b.Major == 0 && b.Minor == 17) || (b.Major == 1 && a.Major == 0 && a.Minor == 17):
	default:
		return "Differing major or minor versions are not supported."
	}
	return ""
}
