package main

import (
	"errors"

	"github.com/sirupsen/logrus"
	velerov1 "github.com/vmware-tanzu/velero/pkg/apis/velero/v1"
	"github.com/vmware-tanzu/velero/pkg/plugin/velero"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// GroupWith names a Secret in the item's namespace that the item block action keeps in the same block.
const GroupWith = "example.cairn.io/group-with"

type recordDelete struct{ log logrus.FieldLogger }

func (r *recordDelete) AppliesTo() (velero.ResourceSelector, error) {
	return velero.ResourceSelector{IncludedResources: []string{"configmaps"}}, nil
}

func (r *recordDelete) Execute(input *velero.DeleteItemActionExecuteInput) error {
	obj := &unstructured.Unstructured{Object: input.Item.UnstructuredContent()}
	r.log.WithField("item", obj.GetNamespace()+"/"+obj.GetName()).WithField("backup", input.Backup.Name).Info("backup item deleted")
	return nil
}

type group struct{ log logrus.FieldLogger }

func (g *group) Name() string { return "example.cairn.io/group" }

func (g *group) AppliesTo() (velero.ResourceSelector, error) {
	return velero.ResourceSelector{IncludedResources: []string{"configmaps"}, LabelSelector: GroupWith}, nil
}

func (g *group) GetRelatedItems(item runtime.Unstructured, backup *velerov1.Backup) ([]velero.ResourceIdentifier, error) {
	obj := &unstructured.Unstructured{Object: item.UnstructuredContent()}
	name := obj.GetLabels()[GroupWith]
	return []velero.ResourceIdentifier{{GroupResource: schema.GroupResource{Resource: "secrets"}, Namespace: obj.GetNamespace(), Name: name}}, nil
}

// noSnapshots is a volume snapshotter for a cloud that has no volumes: every call says so.
type noSnapshots struct{}

var errNoVolumes = errors.New("example.cairn.io/none has no volumes to snapshot")

func (n *noSnapshots) Init(config map[string]string) error { return nil }
func (n *noSnapshots) CreateVolumeFromSnapshot(snapshotID, volumeType, volumeAZ string, iops *int64) (string, error) {
	return "", errNoVolumes
}
func (n *noSnapshots) GetVolumeID(pv runtime.Unstructured) (string, error) { return "", nil }
func (n *noSnapshots) SetVolumeID(pv runtime.Unstructured, volumeID string) (runtime.Unstructured, error) {
	return pv, nil
}
func (n *noSnapshots) GetVolumeInfo(volumeID, volumeAZ string) (string, *int64, error) {
	return "", nil, errNoVolumes
}
func (n *noSnapshots) CreateSnapshot(volumeID, volumeAZ string, tags map[string]string) (string, error) {
	return "", errNoVolumes
}
func (n *noSnapshots) DeleteSnapshot(snapshotID string) error { return errNoVolumes }
