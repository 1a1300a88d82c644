"""Run by ParaView's pvbatch (cli_test.py's `paraview` scenario): opens an XDMF file with
ParaView's XDMF reader, prints one line `RESULT {json}` with the time steps and, at the first
and the last of them, the range of the point field, the number of points and the bounds; then
renders the last step to a PNG.

  pvbatch paraview_view.py FILE.xmf FIELD OUT.png
"""
import json
import sys

from paraview.simple import (ColorBy, CreateView, ResetCamera, SaveScreenshot, Show,
                             XDMFReader)

xmf, field, png = sys.argv[1:4]
reader = XDMFReader(FileNames=[xmf])
reader.UpdatePipelineInformation()
times = list(reader.TimestepValues)
result = {"times": times}
for label, t in (("first", times[0]), ("last", times[-1])):
    reader.UpdatePipeline(t)
    info = reader.GetDataInformation()
    array = reader.PointData[field]
    result[label] = {
        "range": list(array.GetRange()) if array is not None else None,
        "points": info.GetNumberOfPoints(),
        "bounds": list(info.GetBounds()),
        "type": info.GetDataSetTypeAsString(),
    }
view = CreateView("RenderView")
view.ViewSize = [320, 240]
view.ViewTime = times[-1]
shown = Show(reader, view)
ColorBy(shown, ("POINTS", field))
ResetCamera(view)
SaveScreenshot(png, view, ImageResolution=[320, 240])
print("RESULT " + json.dumps(result), flush=True)
