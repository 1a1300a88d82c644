# Sourced by tessera's scripts: lets OpenMPI run as root and on more ranks than cores, which a
# workstation, a container or CI needs. Clusters set their own launcher policy.
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_rmaps_base_oversubscribe=1
export HDF5_USE_FILE_LOCKING=FALSE
if [[ -x /usr/local/cuda/bin/nvcc && -z "${CUDACXX:-}" ]]; then
  export CUDACXX=/usr/local/cuda/bin/nvcc
fi
