package main

import (
	"github.com/sirupsen/logrus"
	velerov1 "github.com/vmware-tanzu/velero/pkg/apis/velero/v1"
	"github.com/vmware-tanzu/velero/pkg/plugin/velero"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

const (
	// RestoredBy is the annotation the restore item action writes on each ConfigMap it restores.
	RestoredBy = "example.cairn.io/restored-by"
	// Skip makes the v2 restore action leave the item out of the restore.
	Skip = "example.cairn.io/skip-restore"
)

type annotateRestore struct{ log logrus.FieldLogger }

func (a *annotateRestore) AppliesTo() (velero.ResourceSelector, error) {
	return velero.ResourceSelector{IncludedResources: []string{"configmaps"}}, nil
}

func (a *annotateRestore) Execute(input *velero.RestoreItemActionExecuteInput) (*velero.RestoreItemActionExecuteOutput, error) {
	obj := &unstructured.Unstructured{Object: input.Item.UnstructuredContent()}
	annotations := obj.GetAnnotations()
	if annotations == nil {
		annotations = map[string]string{}
	}
	annotations[RestoredBy] = "example.cairn.io/annotate in restore " + input.Restore.Name
	obj.SetAnnotations(annotations)
	a.log.WithField("item", obj.GetNamespace()+"/"+obj.GetName()).Info("annotating restored config map")
	return velero.NewRestoreItemActionExecuteOutput(obj), nil
}

type skipRestore struct{ log logrus.FieldLogger }

func (s *skipRestore) Name() string { return "example.cairn.io/skip" }

func (s *skipRestore) AppliesTo() (velero.ResourceSelector, error) {
	return velero.ResourceSelector{IncludedResources: []string{"configmaps"}, LabelSelector: Skip + "=true"}, nil
}

func (s *skipRestore) Execute(input *velero.RestoreItemActionExecuteInput) (*velero.RestoreItemActionExecuteOutput, error) {
	return velero.NewRestoreItemActionExecuteOutput(input.Item).WithoutRestore(), nil
}

func (s *skipRestore) Progress(operationID string, restore *velerov1.Restore) (velero.OperationProgress, error) {
	return velero.OperationProgress{}, nil
}

func (s *skipRestore) Cancel(operationID string, restore *velerov1.Restore) error { return nil }

func (s *skipRestore) AreAdditionalItemsReady(items []velero.ResourceIdentifier, restore *velerov1.Restore) (bool, error) {
	return true, nil
}
