package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/sirupsen/logrus"
	velerov1 "github.com/vmware-tanzu/velero/pkg/apis/velero/v1"
	"github.com/vmware-tanzu/velero/pkg/plugin/velero"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

const (
	// BackedUpBy is the annotation the backup item action writes on each ConfigMap it sees.
	BackedUpBy = "example.cairn.io/backed-up-by"
	// Crash, Fail and Slow are labels that make the backup item action exit, return an error, or take that many seconds.
	Crash = "example.cairn.io/crash"
	Fail  = "example.cairn.io/fail"
	Slow  = "example.cairn.io/slow"
	// Include names a Secret in the item's namespace to back up with it.
	Include = "example.cairn.io/include-secret"
	// Async makes the v2 action start an operation that lasts that many seconds.
	Async = "example.cairn.io/async"
)

type annotateBackup struct{ log logrus.FieldLogger }

func (a *annotateBackup) AppliesTo() (velero.ResourceSelector, error) {
	return velero.ResourceSelector{IncludedResources: []string{"configmaps"}}, nil
}

func (a *annotateBackup) Execute(item runtime.Unstructured, backup *velerov1.Backup) (runtime.Unstructured, []velero.ResourceIdentifier, error) {
	obj := &unstructured.Unstructured{Object: item.UnstructuredContent()}
	labels := obj.GetLabels()
	where := obj.GetNamespace() + "/" + obj.GetName()
	if labels[Crash] == "true" {
		// A panic outside the call's goroutine, which the framework cannot recover: the process dies mid-call.
		go func() { panic("crashing on purpose while backing up " + where) }()
		select {}
	}
	if labels[Fail] == "true" {
		return nil, nil, fmt.Errorf("refusing to back up %s: it is labelled %s", where, Fail)
	}
	if s, err := strconv.Atoi(labels[Slow]); err == nil {
		time.Sleep(time.Duration(s) * time.Second)
	}
	a.log.WithField("item", where).Info("annotating config map")
	annotations := obj.GetAnnotations()
	if annotations == nil {
		annotations = map[string]string{}
	}
	annotations[BackedUpBy] = "example.cairn.io/annotate in backup " + backup.Name
	obj.SetAnnotations(annotations)
	var more []velero.ResourceIdentifier
	if secret := labels[Include]; secret != "" {
		more = append(more, velero.ResourceIdentifier{GroupResource: schema.GroupResource{Resource: "secrets"}, Namespace: obj.GetNamespace(), Name: secret})
	}
	return obj, more, nil
}

// asyncBackup starts an operation of a few seconds per ConfigMap labelled example.cairn.io/async=<seconds>. It keeps
// no state: the operation ID carries its start and length, and a cancel leaves a marker file, so any process of the
// plugin can answer Progress, as Velero requires of asynchronous actions.
type asyncBackup struct{ log logrus.FieldLogger }

func (a *asyncBackup) Name() string { return "example.cairn.io/async" }

func (a *asyncBackup) AppliesTo() (velero.ResourceSelector, error) {
	return velero.ResourceSelector{IncludedResources: []string{"configmaps"}, LabelSelector: Async}, nil
}

func (a *asyncBackup) Execute(item runtime.Unstructured, backup *velerov1.Backup) (runtime.Unstructured, []velero.ResourceIdentifier, string, []velero.ResourceIdentifier, error) {
	obj := &unstructured.Unstructured{Object: item.UnstructuredContent()}
	seconds, err := strconv.Atoi(obj.GetLabels()[Async])
	if err != nil || seconds <= 0 {
		return nil, nil, "", nil, fmt.Errorf("label %s of %s/%s must be a number of seconds", Async, obj.GetNamespace(), obj.GetName())
	}
	id := fmt.Sprintf("%s.%s.%d.%d", obj.GetNamespace(), obj.GetName(), time.Now().UnixMilli(), seconds)
	a.log.WithField("operationID", id).Info("started asynchronous operation")
	return obj, nil, id, nil, nil
}

func (a *asyncBackup) Progress(operationID string, backup *velerov1.Backup) (velero.OperationProgress, error) {
	parts := strings.Split(operationID, ".")
	if len(parts) != 4 {
		return velero.OperationProgress{}, fmt.Errorf("operation ID %s is invalid", operationID)
	}
	startMs, err1 := strconv.ParseInt(parts[2], 10, 64)
	total, err2 := strconv.ParseInt(parts[3], 10, 64)
	if err1 != nil || err2 != nil {
		return velero.OperationProgress{}, fmt.Errorf("operation ID %s is invalid", operationID)
	}
	started := time.UnixMilli(startMs)
	done := int64(time.Since(started) / time.Second)
	if done > total {
		done = total
	}
	p := velero.OperationProgress{NCompleted: done, NTotal: total, OperationUnits: "seconds", Description: "counting seconds", Started: started, Updated: time.Now()}
	if _, err := os.Stat(cancelMarker(operationID)); err == nil {
		p.Completed, p.Err = true, "operation "+operationID+" was canceled"
	} else if done >= total {
		p.Completed = true
	}
	return p, nil
}

func (a *asyncBackup) Cancel(operationID string, backup *velerov1.Backup) error {
	a.log.WithField("operationID", operationID).Info("cancel received")
	if err := os.MkdirAll(filepath.Dir(cancelMarker(operationID)), 0o700); err != nil {
		return err
	}
	return os.WriteFile(cancelMarker(operationID), []byte(backup.Name), 0o600)
}

func cancelMarker(operationID string) string {
	return filepath.Join(os.TempDir(), "cairn-test-plugins", "canceled", operationID)
}
