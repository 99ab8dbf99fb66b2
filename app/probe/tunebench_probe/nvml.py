"""NVML through ctypes (libnvidia-ml.so.1, the driver's library): the rank's GPU's utilisation,
memory, power, SM clock and temperature for the `gpu` telemetry events, and the driver version for
hello. A field the device does not report is absent, never zero.

The rank's GPU is found by its UUID where torch tells it (2.x), else through CUDA_VISIBLE_DEVICES
(NVML numbers GPUs ignoring it), else by the CUDA index. No PCIe or NVLink counters.
tests/app/probe/test_cuda.py reads it on a GPU.
"""
import ctypes
import os

_SUCCESS = 0
_CLOCK_SM = 1
_TEMPERATURE_GPU = 0


class _Utilization(ctypes.Structure):
    _fields_ = [("gpu", ctypes.c_uint), ("memory", ctypes.c_uint)]


class _Memory(ctypes.Structure):
    _fields_ = [("total", ctypes.c_ulonglong), ("free", ctypes.c_ulonglong), ("used", ctypes.c_ulonglong)]


class Nvml:
    """Raises OSError when NVML cannot be loaded or initialised."""

    def __init__(self):
        self._lib = ctypes.CDLL("libnvidia-ml.so.1")
        if self._lib.nvmlInit_v2() != _SUCCESS:
            raise OSError("nvmlInit failed")

    def driver_version(self):
        text = ctypes.create_string_buffer(96)
        if self._lib.nvmlSystemGetDriverVersion(text, ctypes.c_uint(len(text))) != _SUCCESS:
            return ""
        return text.value.decode(errors="replace")

    def device_handle(self, torch, cuda_index):
        """The NVML handle of CUDA device `cuda_index`, or None."""
        handle = ctypes.c_void_p()
        visible = [v.strip() for v in os.environ.get("CUDA_VISIBLE_DEVICES", "").split(",") if v.strip()]
        named = visible[cuda_index] if cuda_index < len(visible) else ""
        uuids = []
        uuid = getattr(torch.cuda.get_device_properties(cuda_index), "uuid", None)  # torch 2.x, no "GPU-"
        if uuid is not None:
            uuids.append(str(uuid) if str(uuid).startswith(("GPU-", "MIG-")) else f"GPU-{uuid}")
        if named.startswith(("GPU-", "MIG-")):
            uuids.append(named)
        for text in uuids:
            if self._lib.nvmlDeviceGetHandleByUUID(text.encode(), ctypes.byref(handle)) == _SUCCESS:
                return handle
        nvml_index = int(named) if named.isdigit() else cuda_index
        if self._lib.nvmlDeviceGetHandleByIndex_v2(ctypes.c_uint(nvml_index), ctypes.byref(handle)) == _SUCCESS:
            return handle
        return None

    def sample(self, handle):
        fields = {}
        utilization, memory, value = _Utilization(), _Memory(), ctypes.c_uint()
        if self._lib.nvmlDeviceGetUtilizationRates(handle, ctypes.byref(utilization)) == _SUCCESS:
            fields["util_pct"] = float(utilization.gpu)
        if self._lib.nvmlDeviceGetMemoryInfo(handle, ctypes.byref(memory)) == _SUCCESS:
            fields["mem_used_bytes"], fields["mem_total_bytes"] = memory.used, memory.total
        if self._lib.nvmlDeviceGetPowerUsage(handle, ctypes.byref(value)) == _SUCCESS:
            fields["power_w"] = value.value / 1000.0
        if self._lib.nvmlDeviceGetClockInfo(handle, _CLOCK_SM, ctypes.byref(value)) == _SUCCESS:
            fields["sm_clock_mhz"] = float(value.value)
        if self._lib.nvmlDeviceGetTemperature(handle, _TEMPERATURE_GPU, ctypes.byref(value)) == _SUCCESS:
            fields["temperature_c"] = float(value.value)
        return fields
