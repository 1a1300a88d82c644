"""Run by ParaView's pvbatch (cli_test.py's `paraview` scenario): opens an XDMF file with every
XDMF reader ParaView offers — the one it picks for the file by itself (OpenDataFile, as a
double-click does), the legacy XDMF Reader and the Xdmf3 readers — and prints one line
`RESULT {json}` with, per reader, the time steps and, at the first and the last of them, the
range of the point field, the number of points and the bounds; then renders the last step, as
the default reader loads it, to a PNG.

  pvbatch paraview_view.py FILE.xmf FIELD OUT.png
"""
import json
import sys

from paraview.simple import (ColorBy, CreateView, OpenDataFile, ResetCamera, SaveScreenshot,
                             Show, Xdmf3ReaderS, Xdmf3ReaderT, XDMFReader)

xmf, field, png = sys.argv[1:4]


def describe(reader):
    reader.UpdatePipelineInformation()
    times = list(reader.TimestepValues)
    out = {"times": times}
    for label, t in (("first", times[0]), ("last", times[-1])):
        reader.UpdatePipeline(t)
        info = reader.GetDataInformation()
        array = reader.PointData[field] if field in reader.PointData.keys() else None
        out[label] = {
            "range": list(array.GetRange()) if array is not None else None,
            "points": info.GetNumberOfPoints(),
            "bounds": list(info.GetBounds()),
            "type": info.GetDataSetTypeAsString(),
        }
    return out


default = OpenDataFile(xmf)
result = {"default": describe(default), "default_reader": default.GetXMLName(),
          "XDMFReader": describe(XDMFReader(FileNames=[xmf])),
          "Xdmf3ReaderS": describe(Xdmf3ReaderS(FileName=[xmf])),
          "Xdmf3ReaderT": describe(Xdmf3ReaderT(FileName=[xmf]))}
view = CreateView("RenderView")
view.ViewSize = [320, 240]
view.ViewTime = result["default"]["times"][-1]
shown = Show(default, view)
ColorBy(shown, ("POINTS", field))
ResetCamera(view)
SaveScreenshot(png, view, ImageResolution=[320, 240])
print("RESULT " + json.dumps(result), flush=True)
