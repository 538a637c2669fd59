// Plugins for cairn's tests, written against Velero's plugin framework: one binary serving every plugin kind, so
// the tests drive each of Velero's gRPC services through the real framework and go-plugin, as a vendor's plugin
// would be driven. Each plugin's behaviour is chosen by labels on the items it sees (see README.md).
package main

import (
	"github.com/sirupsen/logrus"
	"github.com/spf13/pflag"
	"github.com/vmware-tanzu/velero/pkg/plugin/framework"
)

func main() {
	framework.NewServer().
		BindFlags(pflag.CommandLine).
		RegisterBackupItemAction("example.cairn.io/annotate", func(log logrus.FieldLogger) (any, error) { return &annotateBackup{log: log}, nil }).
		RegisterBackupItemActionV2("example.cairn.io/async", func(log logrus.FieldLogger) (any, error) { return &asyncBackup{log: log}, nil }).
		RegisterRestoreItemAction("example.cairn.io/annotate", func(log logrus.FieldLogger) (any, error) { return &annotateRestore{log: log}, nil }).
		RegisterRestoreItemActionV2("example.cairn.io/skip", func(log logrus.FieldLogger) (any, error) { return &skipRestore{log: log}, nil }).
		RegisterDeleteItemAction("example.cairn.io/record-delete", func(log logrus.FieldLogger) (any, error) { return &recordDelete{log: log}, nil }).
		RegisterItemBlockAction("example.cairn.io/group", func(log logrus.FieldLogger) (any, error) { return &group{log: log}, nil }).
		RegisterObjectStore("example.cairn.io/directory", func(log logrus.FieldLogger) (any, error) { return &directoryStore{log: log}, nil }).
		RegisterVolumeSnapshotter("example.cairn.io/none", func(log logrus.FieldLogger) (any, error) { return &noSnapshots{}, nil }).
		Serve()
}
